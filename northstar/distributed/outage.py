"""A worker whose database goes away: it backs off quietly, and past a bound it gives up.

While the journal's Postgres does not answer, a worker logs one warning when it goes
(``database_unreachable``), one at each doubling of its back-off
(``database_still_unreachable``: 2, 4, 8 ... s, up to ``Patience.backoff_cap``) and one
when it answers again (``database_reachable``). Past ``Patience.give_up_after`` the worker
ends with ``JOURNAL_UNAVAILABLE`` and leaves its queued work to the next worker.

Who notices: a lane whose journal statement fails, the supervisor's check of its liveness
session, and DBOS's own threads. Who retries: the supervisor alone, in ``DatabaseWatch.recover``
(tenacity's exponential wait with a little jitter, stopped by the bound or a stop request);
the lanes wait for its verdict (``DatabaseWatch.back``). DBOS's threads keep their own fixed
retry intervals (DBOS 3.x has no setting for them, and each retry is one refused connect):
``QuietDbosLog`` only takes their connection failures out of DBOS's log, counts them, and
wakes the supervisor, so a failure DBOS sees first is checked at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_delay
from tenacity.stop import stop_base
from tenacity.wait import wait_exponential, wait_random

from northstar.errors import JournalUnavailable
from northstar.run.execution import StopSignal

__all__ = [
    "DatabaseWatch",
    "Patience",
    "QuietDbosLog",
    "backoff_level",
    "first_of",
    "is_connection_noise",
]

log = structlog.get_logger("northstar.distributed.worker")


@dataclass(frozen=True)
class Patience:
    """How long a worker waits: from a stop request to its exit, and for its database.

    ``stop_deadline``: SIGTERM (or Ctrl-C) to exit, whatever the database does; an
    iteration still in progress then is left to recovery, as a SIGKILL would leave it.
    ``backoff_first`` / ``backoff_cap``: the first and the longest wait between two probes
    of a database that does not answer. ``give_up_after``: how long it may not answer.
    """

    stop_deadline: float = 10.0
    backoff_first: float = 1.0
    backoff_cap: float = 30.0
    give_up_after: float = 600.0


def backoff_level(patience: Patience, attempt: int) -> float:
    """The wait after the ``attempt``-th failed probe, before its jitter: 1, 2, 4 ... cap."""
    return min(patience.backoff_first * 2.0 ** (attempt - 1), patience.backoff_cap)


# What DBOS's threads log when the database does not answer (their messages carry the
# driver's text, never an exception object to test). Not every OperationalError: a
# statement timeout is one too, and stays visible.
_CONNECTION_NOISE = (
    "connection failed",
    "Connection refused",
    "server closed the connection",
    "consuming input failed",
    "connection is closed",
    "connection is lost",
    "terminating connection",
    "too many clients",
    "the database system is",
    "could not connect",
    "timeout expired",
    "Database connection failed",
)


def is_connection_noise(message: str) -> bool:
    return any(noise in message for noise in _CONNECTION_NOISE)


class QuietDbosLog(logging.Filter):
    """On DBOS's logger: its lines about an unreachable database are counted, not shown."""

    def __init__(self, on_failure: Callable[[], None]) -> None:
        super().__init__("dbos")
        self._on_failure = on_failure  # called in DBOS's thread: must only hand it on
        self.held_back = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not is_connection_noise(record.getMessage()):
            return True
        self.held_back += 1
        self._on_failure()
        return False


async def first_of(*waits: Awaitable[Any], timeout: float | None = None) -> None:
    """Return when the first of ``waits`` is done (or at ``timeout``); cancel the rest."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


class _StopRequested(stop_base):
    def __init__(self, stop: StopSignal) -> None:
        self._stop = stop

    def __call__(self, retry_state: RetryCallState) -> bool:
        return self._stop.requested


class DatabaseWatch:
    """Whether this worker's database answers, on the worker's event loop; see the module."""

    def __init__(
        self,
        patience: Patience,
        shown_url: str,
        *,
        clock: Callable[[], float] = time.monotonic,
        held_back: Callable[[], int] = lambda: 0,
    ) -> None:
        self.patience = patience
        self._shown = shown_url
        self._clock = clock
        self._held_back = held_back  # DBOS lines held back so far (QuietDbosLog's count)
        self._answering = asyncio.Event()
        self._answering.set()
        self._gave_up = asyncio.Event()
        self.woken = asyncio.Event()
        self._since = 0.0
        self._held_at_loss = 0

    @property
    def answering(self) -> bool:
        return self._answering.is_set()

    @property
    def gave_up(self) -> bool:
        return self._gave_up.is_set()

    def lost(self, reason: str) -> None:
        """Someone on the loop saw the database go; the first one says so, once."""
        if self.answering and not self.gave_up:
            self._since = self._clock()
            self._held_at_loss = self._held_back()
            self._answering.clear()
            log.warning("database_unreachable", journal=self._shown, reason=reason)
        self.woken.set()

    def wake(self) -> None:
        """A failure another thread saw (DBOS's): the supervisor checks now, not later."""
        self.woken.set()

    async def back(self, stop: StopSignal) -> bool:
        """Wait until the database answers again (``True``), or a stop or the give-up."""
        await first_of(self._answering.wait(), stop.until_requested(), self._gave_up.wait())
        return self.answering and not stop.requested

    async def recover(self, probe: Callable[[], Awaitable[None]], stop: StopSignal) -> bool:
        """Probe with back-off until it passes (``True``) or a stop comes (``False``).

        ``probe`` raises ``JournalUnavailable`` while the database does not answer. Past
        ``give_up_after`` since it went, ``JournalUnavailable`` ends the recovery.
        """
        left = max(0.0, self.patience.give_up_after - (self._clock() - self._since))
        try:
            async for attempt in self._retrying(left, stop):
                if stop.requested:
                    return False
                with attempt:
                    await probe()
        except JournalUnavailable as exc:
            if stop.requested:
                return False
            raise self._give_up(exc) from exc
        down_for = self._clock() - self._since
        held = self._held_back() - self._held_at_loss
        log.warning("database_reachable", journal=self._shown, down_for_s=round(down_for, 1),
                    dbos_lines_held_back=held)  # fmt: skip
        self._answering.set()
        return True

    def _retrying(self, left: float, stop: StopSignal) -> AsyncRetrying:
        patience = self.patience
        return AsyncRetrying(
            wait=wait_exponential(multiplier=patience.backoff_first, max=patience.backoff_cap)
            + wait_random(0, patience.backoff_first / 4),  # workers of a fleet spread out
            stop=stop_after_delay(left) | _StopRequested(stop),
            retry=retry_if_exception_type(JournalUnavailable),
            sleep=stop.wait,  # a stop ends the wait; the loop then returns before probing
            before_sleep=self._on_doubling,
            reraise=True,
        )

    def _on_doubling(self, retry_state: RetryCallState) -> None:
        """One line each time the back-off doubles (not at every probe, not at the cap)."""
        attempt = retry_state.attempt_number
        level = backoff_level(self.patience, attempt)
        if attempt == 1 or level == backoff_level(self.patience, attempt - 1):
            return
        failure = retry_state.outcome.exception() if retry_state.outcome else None
        log.warning(
            "database_still_unreachable",
            journal=self._shown,
            down_for_s=round(self._clock() - self._since, 1),
            next_probe_in_s=level,
            reason=getattr(failure, "message", str(failure)),
        )

    def _give_up(self, last: JournalUnavailable) -> JournalUnavailable:
        self._gave_up.set()
        waited = round(self._clock() - self._since)
        return JournalUnavailable(
            f"the journal at {self._shown} did not answer for {waited} s "
            f"(the worker's bound: {self.patience.give_up_after:g} s); last: {last.message}",
            path=self._shown,
        )
