"""A journal clock for recovery tests: real time plus an offset the test moves forward."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class Clock:
    """Pass as ``Journal.open(path, now=clock)``; ``advance`` replaces waiting."""

    def __init__(self, *, ahead_s: float = 0) -> None:
        self.offset = timedelta(seconds=ahead_s)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)
