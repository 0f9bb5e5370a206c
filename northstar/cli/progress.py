"""Progress of a multi-iteration run: a live line in a terminal, plain lines otherwise."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from northstar.results import IterationResult

__all__ = ["Progress"]


def _clock_text(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class Progress:
    """Done/total, verified/failed, elapsed and an estimate of the time left."""

    def __init__(
        self,
        total: int,
        stream: TextIO,
        *,
        live: bool,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.stream = stream
        self.live = live
        self._monotonic = monotonic
        self._started = monotonic()
        self.verified = 0
        self.failed = 0

    def line(self) -> str:
        done = self.verified + self.failed
        elapsed = self._monotonic() - self._started
        left = (elapsed / done) * (self.total - done) if done else 0.0
        return (
            f"[{done}/{self.total}] verified {self.verified}, not verified {self.failed}, "
            f"elapsed {_clock_text(elapsed)}, left ~{_clock_text(left)}"
        )

    def update(self, result: IterationResult) -> None:
        """Count one finished iteration and show it."""
        if result.verified:
            self.verified += 1
        else:
            self.failed += 1
        if self.live:
            self.stream.write("\r\x1b[2K" + self.line())
        else:
            verdict = "verified" if result.verified else f"{result.state} ({result.reason_code})"
            self.stream.write(
                f"iteration {result.iteration}/{self.total}: {verdict} "
                f"in {result.duration_ms / 1000:.2f} s\n"
            )
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()
