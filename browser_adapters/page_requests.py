"""The requests of one tab's page: which are pending, when that last changed, and whether a
request that can change something (any method but GET and HEAD) left the page.

Two decisions read it: an ``idle`` check (no request pending for a quiet time, waited for up
to the step's timeout) and ``NOT_SENT`` (a submit step acted, yet nothing that could create
anything was sent). Playwright's request events are used, not the origin gate, because the
gate pauses only documents and a page's own ``fetch`` is what an autosave sends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from playwright.async_api import Frame, Request

__all__ = ["PageRequests", "quiet_left_ms", "wait_idle"]

_READS = frozenset({"GET", "HEAD", "OPTIONS"})


def quiet_left_ms(pending: int, last_change: float, now: float, quiet_ms: int) -> float | None:
    """Milliseconds of quiet still needed (0: idle now); ``None`` while a request is pending."""
    if pending:
        return None
    return max(0.0, quiet_ms - (now - last_change) * 1000)


class PageRequests:
    """Pending requests of a page and the count of those that could change something."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._pending: set[int] = set()
        self.last_change = clock()
        self.changing_sent = 0  # requests by a method other than GET/HEAD/OPTIONS
        self.navigations = 0  # documents the page's main frame loaded
        self.changed = asyncio.Event()

    def request_handlers(self) -> tuple[tuple[str, Callable[[Any], None]], ...]:
        """The request events of a page or a whole context, with their handlers."""
        return (
            ("request", self.started),
            ("requestfinished", self.ended),
            ("requestfailed", self.ended),
        )

    def handlers(self) -> tuple[tuple[str, Callable[[Any], None]], ...]:
        """A page's events to listen to: its requests and its main frame's navigations."""
        return (*self.request_handlers(), ("framenavigated", self.navigated))

    def navigated(self, frame: Frame) -> None:
        if frame.parent_frame is None:
            self.navigations += 1

    @property
    def pending(self) -> int:
        return len(self._pending)

    def started(self, request: Request) -> None:
        self._pending.add(id(request))
        if request.method.upper() not in _READS:
            self.changing_sent += 1
        self._touch()

    def ended(self, request: Request) -> None:
        self._pending.discard(id(request))
        self._touch()

    def _touch(self) -> None:
        self.last_change = self._clock()
        self.changed.set()

    def quiet_left(self, quiet_ms: int, since: float) -> float | None:
        """Quiet time still needed, counted from the last change or ``since``, the later."""
        now = self._clock()
        return quiet_left_ms(self.pending, max(self.last_change, since), now, quiet_ms)

    def now(self) -> float:
        return self._clock()


async def wait_idle(requests: PageRequests, quiet_ms: int, timeout_ms: float) -> None:
    """Wait until no request was pending for ``quiet_ms``; ``AssertionError`` when the
    timeout passes first (the check's failure, converted like any other)."""
    # The quiet time counts from the wait's start: a save that a timer is about to send
    # (a debounced autosave) is not finished just because the page was quiet before.
    since = requests.now()
    deadline = since + timeout_ms / 1000
    while (left := requests.quiet_left(quiet_ms, since)) != 0:
        remaining = deadline - requests.now()
        if remaining <= 0:
            raise AssertionError(
                f"the page was not idle for {quiet_ms} ms within {timeout_ms:g} ms "
                f"({requests.pending} request(s) pending)"
            )
        requests.changed.clear()
        wait = remaining if left is None else min(left / 1000, remaining)
        # Until the pending set changes, or the quiet time (or the timeout) runs out.
        with suppress(TimeoutError):
            await asyncio.wait_for(requests.changed.wait(), wait)
