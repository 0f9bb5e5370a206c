"""A worker's supervisor: its liveness lock, its watch on the database, takeovers.

Every ``takeover_every`` seconds it checks that this worker's liveness session is alive
and takes over the pending work of dead workers (``takeover``). When the database goes
(this check fails, a lane's journal fails, or DBOS's threads log connection failures),
it alone probes the database with back-off (``outage.DatabaseWatch.recover``): a probe
passes when a new session opens and this worker holds its liveness lock again. Its
database calls run on daemon threads (``in_thread``), so one blocked on a database that
hangs never holds the worker's exit.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from functools import partial
from typing import TypeVar

import structlog
from dbos import DBOS, DBOSClient

from northstar.distributed.dbos_setup import APP_NAME
from northstar.distributed.outage import DatabaseWatch, first_of
from northstar.distributed.takeover import Liveness, fresh_session, takeover_candidates
from northstar.errors import JournalError, JournalUnavailable
from northstar.journal.paths import redact_url
from northstar.journal.postgres import is_unavailable
from northstar.run.execution import StopSignal

__all__ = ["Supervisor", "in_thread"]

log = structlog.get_logger("northstar.distributed.worker")
T = TypeVar("T")


async def in_thread(call: Callable[[], T]) -> T:
    """``call()`` on a daemon thread: one blocked on a dead database never holds the exit."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def run() -> None:
        try:
            result = call()
        except BaseException as exc:  # handed to the awaiting coroutine as it is
            error = exc
            with suppress(RuntimeError):  # the loop may be closed by then
                loop.call_soon_threadsafe(settle, lambda: future.set_exception(error))
            return
        with suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, lambda: future.set_result(result))

    threading.Thread(target=run, name="northstar-worker-db", daemon=True).start()
    return await future


def _recover_pending(executor_id: str) -> int:
    """DBOS's own recovery of one executor's PENDING workflows: back on their queue.

    ``_recover_pending_workflows`` is DBOS 3.x's internal entry (its Conductor service
    calls it); re-enqueuing matches only workflows still PENDING under that executor id,
    so a second recovery of the same dead worker puts nothing back twice.
    """
    return len(DBOS._recover_pending_workflows([executor_id]))


class Supervisor:
    """One worker's liveness, database watch and takeovers; see the module docstring."""

    def __init__(
        self,
        journal_url: str,
        name: str,
        queue_name: str,
        *,
        watch: DatabaseWatch,
        stop: StopSignal,
        takeover_every: float,
        on_takeover: Callable[[str, int], None],
    ) -> None:
        self.journal_url = journal_url
        self.name = name
        self.queue_name = queue_name
        self.watch = watch
        self.stop = stop
        self.takeover_every = takeover_every
        self.on_takeover = on_takeover
        self._liveness: Liveness | None = None
        self._client: DBOSClient | None = None

    async def hold(self) -> None:
        """This worker's liveness lock (``UsageInvalid`` if a live worker has its name)."""
        self._liveness = await in_thread(partial(Liveness.hold, self.journal_url, self.name))
        # Fails fast instead of DBOS's endless retry, so an outage is noticed here.
        self._client = DBOSClient(
            system_database_url=self.journal_url,
            application_name=APP_NAME,
            lazy=True,
            retry_connection_errors=False,
            system_database_pool_size=1,
        )

    def close(self) -> None:
        if self._client is not None:
            self._client.destroy()
        if self._liveness is not None:
            self._liveness.close()

    async def run(self) -> None:
        """Every ``takeover_every`` s: this worker's lock, then dead workers' work to take over.

        When the database goes, probe it with back-off until it is back (or give up). After
        it is back, take nobody over for one back-off cap and one check: every live peer
        lost its lock too, and takes it back at its next probe.
        """
        calm_until = 0.0
        calm = self.watch.patience.backoff_cap + self.takeover_every
        while not self.stop.requested:
            if not self.watch.answering:
                if not await self.watch.recover(self._probe, self.stop):
                    return
                calm_until = time.monotonic() + calm
            fresh = self.watch.woken.is_set()  # DBOS saw a failure: try a new session too
            self.watch.woken.clear()
            take_over = time.monotonic() >= calm_until
            try:
                taken = await in_thread(partial(self._check, fresh=fresh, take_over=take_over))
            except JournalUnavailable as exc:
                self.watch.lost(exc.message)
                continue
            for peer, count in taken:
                self.on_takeover(peer, count)
            await self._tick(rested=fresh)

    async def _tick(self, *, rested: bool) -> None:
        """Until the next check: ``takeover_every`` s, or sooner when something failed."""
        if rested:  # DBOS's failures come in bursts: at most one new session a back-off
            await self.stop.wait(self.watch.patience.backoff_first)
        wakes = (self.stop.until_requested(), self.watch.woken.wait())
        await first_of(*wakes, timeout=self.takeover_every)

    def _check(self, *, fresh: bool, take_over: bool) -> list[tuple[str, int]]:
        assert self._liveness is not None
        self._liveness.check()
        if fresh:
            fresh_session(self.journal_url)
        return self._take_over_dead(self._liveness) if take_over else []

    async def _probe(self) -> None:
        """The database answers, and this worker holds its liveness lock again."""
        await in_thread(self._probe_now)

    def _probe_now(self) -> None:
        liveness = self._liveness
        assert liveness is not None
        if not liveness.lost:
            with suppress(JournalUnavailable):
                liveness.check()
        if liveness.lost:
            liveness.close()
            self._liveness = Liveness.retake(self.journal_url, self.name)
        else:
            fresh_session(self.journal_url)  # also refused when max_connections is reached

    def _take_over_dead(self, liveness: Liveness) -> list[tuple[str, int]]:
        """Each other worker owning pending work of this queue whose liveness lock is free."""
        assert self._client is not None
        try:
            pending = self._client.list_workflows(
                status="PENDING", queue_name=self.queue_name, load_input=False, load_output=False
            )
        except Exception as exc:  # DBOS's database errors, at this one boundary
            raise self._dbos_error("cannot list pending work", exc) from exc
        taken = []
        for peer in takeover_candidates((s.executor_id for s in pending), self.name):
            count = liveness.try_take_over(peer, _recover_pending)
            if count is not None:
                log.info("worker_taken_over", worker=self.name, dead=peer, iterations=count)
                taken.append((peer, count))
        return taken

    def _dbos_error(self, doing: str, exc: Exception) -> JournalError:
        shown = redact_url(self.journal_url)
        message = f"worker {self.name} {doing} on {shown}"
        if is_unavailable(getattr(exc, "orig", exc)):
            return JournalUnavailable(message, path=shown)
        return JournalError(message, path=shown)
