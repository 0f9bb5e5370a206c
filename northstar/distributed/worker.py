"""``northstar worker``: one browser per process, K lanes fed by a DBOS queue.

Each iteration of a queued run is a DBOS workflow (``northstar_iteration``) whose one step
runs the iteration on this process's browser. DBOS runs up to K of them at once
(``worker_concurrency``), each in its own thread; the thread hands the iteration to this
process's event loop, where the browser and the journal live, and waits for its verdict.
A lane therefore takes its next iteration only after the last one was verified (or
settled otherwise) and journaled.

When a worker dies, its unfinished workflows go back on the queue: taken over by a
surviving worker within ``takeover_every`` seconds (``takeover``: liveness locks), or put
back by DBOS when a worker with the same ``--name`` starts first. The step then reads the
journal before it touches the browser (``claim_action``): an iteration whose submission
was in flight or dispatched becomes ``unknown`` and blocks the run, so it is never sent
again; one that dispatched nothing runs again.

SIGTERM (or Ctrl-C): no new iteration is taken, the step in progress finishes, and the
iterations in progress end ``stopped`` (``northstar resume`` continues them later). The
process exits within ``Patience.stop_deadline`` whatever the database does
(``stopping.StopDeadline``); an iteration it could not journal by then is left to recovery.
An iteration counts as in progress until its verdict is journaled, not until its lane is
free: after the verdict a lane still runs a positive probe control and updates the run's
status, and a stop that finds the database gone then leaves only the queue's record of the
iteration, which the next claim completes (``RECORDED``: the verdict, and the run's status).

The database going away (``outage``): each lane has a journal connection of its own. A
lane whose statement fails on a lost connection stops writing at once (the connection
refuses every later statement), waits until the supervisor sees the database answer and
holds this worker's liveness lock again, then opens a new connection and claims its
iteration again: the journal decides (run it again if nothing was sent, ``unknown`` if a
submission may have been). An iteration is thus recorded whole or left as a SIGKILL
leaves it, never half-written and continued.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import structlog
from dbos import DBOS

from northstar.browser import BrowserHost
from northstar.composition import load_compiled, open_host
from northstar.distributed.dbos_setup import dbos_config
from northstar.distributed.decisions import (
    ClaimAction,
    claim_action,
    finished_status,
    submitted_files,
    worker_row,
)
from northstar.distributed.outage import DatabaseWatch, Patience, QuietDbosLog, first_of
from northstar.distributed.stopping import EXIT_CODES
from northstar.distributed.supervisor import Supervisor, in_thread
from northstar.errors import (
    DefinitionChanged,
    JournalError,
    JournalUnavailable,
    NorthstarError,
    ParamInvalid,
)
from northstar.journal import Journal, RunRecord, RunStatus
from northstar.journal.paths import redact_url
from northstar.plan.compiler import with_default_timeout
from northstar.readers.endings import read_ending
from northstar.recipe.params import params_fingerprint
from northstar.results import IterationState
from northstar.run.execution import RunRequest, StopSignal, run_one_iteration
from northstar.run.repeat import RepeatOptions
from northstar.run.signin import KeptSignIns

__all__ = ["Worker", "default_worker_name", "iteration_workflow"]

log = structlog.get_logger("northstar.distributed.worker")

_WORKER: Worker | None = None  # the one worker of this process, while it serves
_SERVED = False  # a worker served in this process (a workflow that comes later is left)
_DBOS_SHUTDOWN_S = 5.0  # then the process ends without waiting for DBOS's threads


@DBOS.workflow(name="northstar_iteration")
def iteration_workflow(run_id: str, number: int, row: dict[str, Any], fingerprint: str) -> str:
    """One iteration of a queued run; its verdict (the iteration's state) is the result."""
    return iteration_step(run_id, number, row, fingerprint)


@DBOS.step(name="northstar_iteration_step")
def iteration_step(run_id: str, number: int, row: dict[str, Any], fingerprint: str) -> str:
    worker = _WORKER
    if worker is None and not _SERVED:
        raise RuntimeError("northstar_iteration runs only inside `northstar worker`")
    verdict = None if worker is None else worker.run_threadsafe(run_id, number, row, fingerprint)
    if verdict is None:  # left to recovery: returning (or raising) would record a verdict
        threading.Event().wait()  # never set: this DBOS thread ends with the process
    assert verdict is not None
    return verdict


@dataclass(eq=False)
class _Taken:
    """An iteration a lane took, and whether its verdict is in the journal yet."""

    run_id: str
    number: int
    recorded: bool = False

    def record(self) -> None:
        self.recorded = True


def default_worker_name() -> str:
    """Unique per process; pass ``--name`` so a restarted worker recovers its own work."""
    return f"{socket.gethostname()}-{os.getpid()}"


class Worker:
    """Serves one queue until stopped; see the module docstring."""

    def __init__(
        self,
        journal_url: str,
        queue_name: str,
        *,
        concurrency: int,
        name: str,
        environ: Mapping[str, str] | None = None,
        takeover_every: float = 5.0,
        poll_every: float = 0.2,
        patience: Patience | None = None,
        on_takeover: Callable[[str, int], None] = lambda peer, count: None,
        files_dirs: tuple[str, ...] = (),
        on_stopping: Callable[[], None] = lambda: None,
        state: str | None = None,
    ) -> None:
        self.journal_url = journal_url
        self.queue_name = queue_name
        self.concurrency = concurrency
        self.name = name
        self.takeover_every = takeover_every
        self.poll_every = poll_every  # DBOS's queue poll: one dequeue query per interval
        self.patience = patience or Patience()
        self.on_takeover = on_takeover  # told (dead worker, iterations put back) on each takeover
        self.files_dirs = files_dirs  # --files-dir: where uploads may come from, besides a recipe's
        self.on_stopping = on_stopping  # told once when the worker starts to stop (any reason)
        self.state = state  # --state: a saved sign-in every iteration's context starts from
        self._environ = os.environ if environ is None else environ
        self._lanes: asyncio.Queue[int] = asyncio.Queue()
        for lane in range(1, concurrency + 1):
            self._lanes.put_nowait(lane)
        self._journals: dict[int, Journal] = {}  # each lane's own connection
        self._loop: asyncio.AbstractEventLoop | None = None
        self._host: BrowserHost | None = None
        self._queued: dict[str, dict[str, Any] | None] = {}  # each run's run_queued event
        self._quiet = QuietDbosLog(self._wake_from_thread)
        self._idle = asyncio.Event()
        self._idle.set()
        self.watch = DatabaseWatch(
            self.patience, redact_url(journal_url), held_back=lambda: self._quiet.held_back
        )
        self.stop = StopSignal()
        self._supervisor = Supervisor(
            journal_url,
            name,
            queue_name,
            watch=self.watch,
            stop=self.stop,
            takeover_every=takeover_every,
            on_takeover=lambda peer, count: self.on_takeover(peer, count),
        )
        self._taken: set[_Taken] = set()  # the iterations the lanes serve now
        self.left_to_recovery = 0  # iterations this worker took and leaves to the next one
        self.sign_ins: KeptSignIns | None = None  # each lane's signed-in state, while serving

    @property
    def in_progress(self) -> int:
        """Iterations taken whose verdict is not journaled: what an exit now leaves behind."""
        return sum(1 for taken in self._taken if not taken.recorded)

    def exit_code(self) -> int:
        """What the process should exit with, as things stand (see ``stopping.EXIT_CODES``)."""
        if self.watch.gave_up:
            return EXIT_CODES["journal_unavailable"]
        if self.in_progress or self.left_to_recovery:
            return EXIT_CODES["left_to_recovery"]
        return EXIT_CODES["stopped"]

    async def serve(self, host_settings: Any, on_ready: Callable[[], None] = lambda: None) -> None:
        """Open the browser and the journal, take iterations until ``stop``, then drain."""
        global _WORKER, _SERVED
        self._loop = asyncio.get_running_loop()
        self.sign_ins = KeptSignIns()
        try:
            for lane in range(1, self.concurrency + 1):  # fails fast if the database is not there
                self._journals[lane] = Journal.open(self.journal_url)
            async with open_host(host_settings) as host:
                self._host = host
                # Our own lock first: DBOS recovers this name's work at launch, never a survivor.
                await self._supervisor.hold()
                _WORKER, _SERVED = self, True
                try:
                    await in_thread(self._launch)
                    on_ready()
                    await self._serve_until_stopped()
                finally:
                    _WORKER = None
                    self._supervisor.close()
        finally:
            self.sign_ins.close()  # the signed-in states are secrets: none outlives the worker
            for journal in self._journals.values():
                with suppress(JournalError):
                    journal.close()

    async def _serve_until_stopped(self) -> None:
        """Supervise until a stop (or the supervisor's end); then drain, within the deadline."""
        supervisor = asyncio.create_task(self._supervisor.run())
        try:
            await first_of(asyncio.shield(supervisor), self.stop.until_requested())
            if supervisor.done():
                supervisor.result()  # the give-up (JOURNAL_UNAVAILABLE) or another error
        finally:
            self.on_stopping()
            self.stop.request()
            supervisor.cancel()
            await self._drain()

    async def _drain(self) -> None:
        """The lanes finish their step and journal it; then DBOS stops (bounded)."""
        await self._idle.wait()
        await first_of(in_thread(self._shut_down_dbos), timeout=_DBOS_SHUTDOWN_S)

    def _shut_down_dbos(self) -> None:
        DBOS.destroy(workflow_completion_timeout_sec=0)  # the lanes are idle or left already
        logging.getLogger("dbos").removeFilter(self._quiet)

    def _launch(self) -> None:
        DBOS(config=dbos_config(self.journal_url, executor_id=self.name))
        logging.getLogger("dbos").addFilter(self._quiet)  # after DBOS set its logger up
        DBOS.listen_queues([self.queue_name])  # else DBOS serves every queue in the database
        DBOS.launch()
        DBOS.register_queue(
            self.queue_name,
            worker_concurrency=self.concurrency,
            polling_interval_sec=self.poll_every,
            on_conflict="always_update",
        )

    def _wake_from_thread(self) -> None:
        """DBOS's thread saw the database fail: have the supervisor look at once."""
        loop = self._loop
        if loop is not None:
            with suppress(RuntimeError):  # the loop is closed: the worker is gone
                loop.call_soon_threadsafe(self.watch.wake)

    def run_threadsafe(
        self, run_id: str, number: int, row: dict[str, Any], fingerprint: str
    ) -> str | None:
        """Called from a DBOS thread: the verdict, or ``None`` when left to recovery."""
        assert self._loop is not None
        work = self._serve_iteration(run_id, number, row, fingerprint)
        try:
            verdict = asyncio.run_coroutine_threadsafe(work, self._loop)
        except RuntimeError:  # the loop is closed: the worker is ending
            work.close()
            return None
        try:
            return verdict.result()
        except concurrent.futures.CancelledError:  # the loop ended with it: the worker is gone
            return None

    async def _serve_iteration(
        self, run_id: str, number: int, row: dict[str, Any], fingerprint: str
    ) -> str | None:
        """Claim and run in a free lane; claim again on a new connection after an outage."""
        taken = _Taken(run_id, number)
        lane = await self._take_lane()  # recovered work may come beyond ``concurrency``
        if lane is None:
            self._leave(taken, "taken after the stop request")
            return None
        self._taken.add(taken)
        self._idle.clear()
        try:
            while True:
                try:
                    journal = self._lane_journal(lane)
                    return await self._claim(journal, taken, row, fingerprint, lane)
                except JournalUnavailable as exc:
                    self._drop_lane_journal(lane)
                    self.watch.lost(exc.message)
                    if not await self.watch.back(self.stop):
                        self._leave(taken, "its journal did not answer")
                        return None
        finally:
            self._taken.discard(taken)
            self._lanes.put_nowait(lane)
            if not self._taken:
                self._idle.set()

    async def _take_lane(self) -> int | None:
        """A free lane, or ``None`` once a stop is requested (nothing new starts then)."""
        taking = asyncio.ensure_future(self._lanes.get())
        await first_of(asyncio.shield(taking), self.stop.until_requested())
        if not taking.done():
            taking.cancel()
            return None
        if self.stop.requested:
            self._lanes.put_nowait(taking.result())
            return None
        return taking.result()

    def _leave(self, taken: _Taken, why: str) -> None:
        """Return no verdict: DBOS keeps the workflow pending for the next claim."""
        where = {"run_id": taken.run_id, "iteration": taken.number, "reason": why}
        if taken.recorded:  # nothing in progress: the next claim returns the verdict
            log.warning("iteration_settled_left_on_queue", **where)
            return
        self.left_to_recovery += 1
        log.warning("iteration_left_to_recovery", **where)

    def _lane_journal(self, lane: int) -> Journal:
        if lane not in self._journals:
            self._journals[lane] = Journal.open(self.journal_url)
        return self._journals[lane]

    def _drop_lane_journal(self, lane: int) -> None:
        journal = self._journals.pop(lane, None)
        if journal is not None:
            with suppress(JournalError):
                journal.close()

    async def _claim(
        self, journal: Journal, taken: _Taken, row: dict[str, Any], fingerprint: str, lane: int
    ) -> str:
        run_id, number = taken.run_id, taken.number
        record = journal.run_record(run_id)
        state = journal.iteration_state(run_id, number)
        ours = journal.serving_queue(run_id) == self.queue_name
        opened = len(journal.open_submissions(run_id, number))
        action = claim_action(record.status, state, opened, ours=ours)
        structlog.contextvars.bind_contextvars(run_id=run_id, iteration=number, lane=lane)
        log.info("iteration_claimed", action=str(action), worker=self.name)
        if action is ClaimAction.RECORDED:
            taken.record()
            if ours:  # the lane that settled it may have lost the database before this
                self._finish_if_settled(journal, record)
            return str(state)
        if action is ClaimAction.SKIP:
            return f"skipped: run {record.status}" if ours else "skipped: resumed elsewhere"
        if action is ClaimAction.BLOCK:
            return self._block(journal, taken)
        if action is ClaimAction.STOP:
            journal.mark_iteration(
                run_id,
                number,
                IterationState.STOPPED,
                reason_code="RUN_BLOCKED",
                reason=f"its worker stopped before sending anything; the run is {record.status}",
            )
            taken.record()
            return IterationState.STOPPED.value
        return await self._run(journal, record, taken, row, fingerprint, lane)

    def _block(self, journal: Journal, taken: _Taken) -> str:
        run_id, number = taken.run_id, taken.number
        journal.mark_iteration(
            run_id,
            number,
            IterationState.UNKNOWN,
            reason_code="OUTCOME_UNKNOWN",
            reason="its worker stopped after a submission was sent; it is not sent again",
        )
        taken.record()
        journal.event(run_id, "iteration_recovered", iteration=number, worker=self.name)
        journal.finish_run(run_id, RunStatus.BLOCKED)
        self._log_ending(run_id)
        return IterationState.UNKNOWN.value

    async def _run(
        self,
        journal: Journal,
        record: RunRecord,
        taken: _Taken,
        row: dict[str, Any],
        fingerprint: str,
        lane: int,
    ) -> str:
        number = taken.number
        host = self._host
        assert host is not None
        try:
            request = self._request(record, row, fingerprint)
            journal.event(record.run_id, "iteration_claimed", iteration=number, worker=self.name)
            files = submitted_files(self._queued_event(journal, record.run_id), fingerprint)
            result = await run_one_iteration(
                request,
                record.run_id,
                number,
                host=host,
                journal=journal,
                lane=lane,
                stop=self.stop,
                submitted_files=files,
                kept=self.sign_ins,
                on_recorded=lambda result: taken.record(),
            )
        except JournalUnavailable:
            raise  # not the run's fault: the lane claims it again when the database answers
        except NorthstarError as exc:  # this worker cannot run it as it was bound: stop the run
            journal.record_stop(
                record.run_id, exc.with_context(run_id=record.run_id, iteration=number)
            )
            journal.finish_run(record.run_id, RunStatus.FAILED)
            self._log_ending(record.run_id)
            return f"failed: {exc.code}"
        self._finish_if_settled(journal, record)
        return result.state.value

    def _queued_event(self, journal: Journal, run_id: str) -> dict[str, Any] | None:
        """The run's ``run_queued`` event, read once per run (it never changes)."""
        if run_id not in self._queued:
            self._queued[run_id] = journal.first_event(run_id, "run_queued")
        return self._queued[run_id]

    def _request(self, record: RunRecord, row: dict[str, Any], fingerprint: str) -> RunRequest:
        """The run's request as this worker sees it: its recipe file must be the run's."""
        # The run's step time limit (``--timeout`` when it was queued) for a recipe that sets
        # none: the worker's own default would make a queued run fail where a local one holds.
        loaded = with_default_timeout(
            load_compiled(record.recipe_path), record.options.get("timeout")
        )
        compiled = replace(loaded, files_dirs=self.files_dirs)
        if compiled.recipe_hash != record.definition_hash:
            raise DefinitionChanged(
                f"the recipe {record.recipe_path} on worker {self.name} is not the one "
                f"run {record.run_id} was started with",
                run_id=record.run_id,
                path=record.recipe_path,
            )
        specs = compiled.recipe.params
        full = worker_row(specs, row, self._environ)
        if params_fingerprint(specs, full) != fingerprint:
            raise ParamInvalid(
                f"the parameters on worker {self.name} differ from the run's",
                run_id=record.run_id,
                fix="Give every worker the run's secrets (NORTHSTAR_SECRET_<NAME>).",
            )
        return RunRequest(
            recipe_path=Path(record.recipe_path),
            compiled=compiled,
            rows=[full],
            repeat=RepeatOptions.of(record.total_iterations, 0),
            base_url=record.options.get("base_url"),
            project=record.project,
            profile=record.profile or None,
            state=self.state,
        )

    def _finish_if_settled(self, journal: Journal, record: RunRecord) -> None:
        final = journal.finish_run_when(
            record.run_id, lambda states: finished_status(states, record.total_iterations)
        )
        if final is not None:
            if self.sign_ins is not None:
                self.sign_ins.forget_run(record.run_id)
            self._log_ending(record.run_id)

    def _log_ending(self, run_id: str) -> None:
        """The run's ending as the journal has it (the lines ``run --queue`` prints).

        Only a log line: a journal that cannot be read for it changes nothing recorded.
        """
        try:
            ending = read_ending(self.journal_url, run_id, is_alive=lambda pid: True)
        except NorthstarError as exc:
            log.warning("run_ending_unread", worker=self.name, code=exc.code)
            return
        log.info("run_ended", worker=self.name, **ending.to_dict())
