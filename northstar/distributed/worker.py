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
iterations in progress end ``stopped`` (``northstar resume`` continues them later).
"""

from __future__ import annotations

import asyncio
import os
import queue
import socket
from collections.abc import Callable, Mapping
from dataclasses import replace
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
from northstar.distributed.takeover import Liveness, takeover_candidates
from northstar.errors import DefinitionChanged, JournalError, NorthstarError, ParamInvalid
from northstar.journal import Journal, RunRecord, RunStatus
from northstar.journal.paths import redact_url
from northstar.readers.endings import read_ending
from northstar.recipe.params import params_fingerprint
from northstar.results import IterationState
from northstar.run.execution import RunRequest, StopSignal, run_one_iteration
from northstar.run.repeat import RepeatOptions

__all__ = ["Worker", "default_worker_name", "iteration_workflow"]

log = structlog.get_logger("northstar.distributed.worker")

_WORKER: Worker | None = None  # the one worker of this process, while it serves


@DBOS.workflow(name="northstar_iteration")
def iteration_workflow(run_id: str, number: int, row: dict[str, Any], fingerprint: str) -> str:
    """One iteration of a queued run; its verdict (the iteration's state) is the result."""
    return iteration_step(run_id, number, row, fingerprint)


@DBOS.step(name="northstar_iteration_step")
def iteration_step(run_id: str, number: int, row: dict[str, Any], fingerprint: str) -> str:
    if _WORKER is None:
        raise RuntimeError("northstar_iteration runs only inside `northstar worker`")
    return _WORKER.run_threadsafe(run_id, number, row, fingerprint)


def _recover_pending(executor_id: str) -> int:
    """DBOS's own recovery of one executor's PENDING workflows: back on their queue.

    ``_recover_pending_workflows`` is DBOS 3.x's internal entry (its Conductor service
    calls it); re-enqueuing matches only workflows still PENDING under that executor id,
    so a second recovery of the same dead worker puts nothing back twice.
    """
    return len(DBOS._recover_pending_workflows([executor_id]))


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
        on_takeover: Callable[[str, int], None] = lambda peer, count: None,
        files_dirs: tuple[str, ...] = (),
    ) -> None:
        self.journal_url = journal_url
        self.queue_name = queue_name
        self.concurrency = concurrency
        self.name = name
        self.takeover_every = takeover_every
        self.on_takeover = on_takeover  # told (dead worker, iterations put back) on each takeover
        self.files_dirs = files_dirs  # --files-dir: where uploads may come from, besides a recipe's
        self._environ = os.environ if environ is None else environ
        self._lanes: queue.Queue[int] = queue.Queue()
        for lane in range(1, concurrency + 1):
            self._lanes.put(lane)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._journal: Journal | None = None
        self._host: BrowserHost | None = None
        self._queued: dict[str, dict[str, Any] | None] = {}  # each run's run_queued event
        self.stop = StopSignal()

    async def serve(self, host_settings: Any, on_ready: Callable[[], None] = lambda: None) -> None:
        """Open the browser and the journal, take iterations until ``stop``, then drain."""
        global _WORKER
        self._loop = asyncio.get_running_loop()
        with Journal.open(self.journal_url) as journal:
            async with open_host(host_settings) as host:
                self._journal, self._host = journal, host
                _WORKER = self
                # Our own lock first: DBOS recovers this name's work at launch, never a survivor.
                liveness = await asyncio.to_thread(Liveness.hold, self.journal_url, self.name)
                try:
                    await asyncio.to_thread(self._launch)
                    on_ready()
                    await self._serve_until_stopped(liveness)
                finally:
                    _WORKER = None
                    liveness.close()

    async def _serve_until_stopped(self, liveness: Liveness) -> None:
        """Take over dead workers' work every ``takeover_every`` s; drain DBOS on any exit."""
        try:
            while not self.stop.requested:
                for peer, count in await asyncio.to_thread(self._take_over_dead, liveness):
                    self.on_takeover(peer, count)
                await self.stop.wait(self.takeover_every)
        finally:
            self.stop.request()  # a lost liveness lock stops this worker as SIGTERM does
            await asyncio.to_thread(DBOS.destroy, workflow_completion_timeout_sec=120)

    def _take_over_dead(self, liveness: Liveness) -> list[tuple[str, int]]:
        """Each other worker owning pending work of this queue whose liveness lock is free."""
        try:
            pending = DBOS.list_workflows(
                status="PENDING", queue_name=self.queue_name, load_input=False, load_output=False
            )
        except Exception as exc:  # DBOS's database errors, at this one boundary
            shown = redact_url(self.journal_url)
            raise JournalError(f"worker {self.name} cannot list pending work on {shown}") from exc
        taken = []
        for peer in takeover_candidates((s.executor_id for s in pending), self.name):
            count = liveness.try_take_over(peer, _recover_pending)
            if count is not None:
                log.info("worker_taken_over", worker=self.name, dead=peer, iterations=count)
                taken.append((peer, count))
        return taken

    def _launch(self) -> None:
        DBOS(config=dbos_config(self.journal_url, executor_id=self.name))
        DBOS.launch()
        DBOS.register_queue(
            self.queue_name,
            worker_concurrency=self.concurrency,
            polling_interval_sec=0.2,
            on_conflict="always_update",
        )

    def run_threadsafe(
        self, run_id: str, number: int, row: dict[str, Any], fingerprint: str
    ) -> str:
        """Called from a DBOS thread: run on this process's loop, in a free lane."""
        assert self._loop is not None
        lane = self._lanes.get()
        try:
            work = self._claim(run_id, number, row, fingerprint, lane)
            return asyncio.run_coroutine_threadsafe(work, self._loop).result()
        finally:
            self._lanes.put(lane)

    async def _claim(
        self, run_id: str, number: int, row: dict[str, Any], fingerprint: str, lane: int
    ) -> str:
        journal = self._journal
        assert journal is not None
        record = journal.run_record(run_id)
        state = journal.iteration_state(run_id, number)
        action = claim_action(record.status, state, len(journal.open_submissions(run_id, number)))
        structlog.contextvars.bind_contextvars(run_id=run_id, iteration=number, lane=lane)
        log.info("iteration_claimed", action=str(action), worker=self.name)
        if action is ClaimAction.RECORDED:
            return str(state)
        if action is ClaimAction.SKIP:
            return f"skipped: run {record.status}"
        if action is ClaimAction.BLOCK:
            return self._block(run_id, number)
        if action is ClaimAction.STOP:
            journal.mark_iteration(
                run_id,
                number,
                IterationState.STOPPED,
                reason_code="RUN_BLOCKED",
                reason=f"its worker stopped before sending anything; the run is {record.status}",
            )
            return IterationState.STOPPED.value
        return await self._run(record, number, row, fingerprint, lane)

    def _block(self, run_id: str, number: int) -> str:
        journal = self._journal
        assert journal is not None
        journal.mark_iteration(
            run_id,
            number,
            IterationState.UNKNOWN,
            reason_code="OUTCOME_UNKNOWN",
            reason="its worker stopped after a submission was sent; it is not sent again",
        )
        journal.event(run_id, "iteration_recovered", iteration=number, worker=self.name)
        journal.finish_run(run_id, RunStatus.BLOCKED)
        self._log_ending(run_id)
        return IterationState.UNKNOWN.value

    async def _run(
        self, record: RunRecord, number: int, row: dict[str, Any], fingerprint: str, lane: int
    ) -> str:
        journal, host = self._journal, self._host
        assert journal is not None
        assert host is not None
        try:
            request = self._request(record, row, fingerprint)
            journal.event(record.run_id, "iteration_claimed", iteration=number, worker=self.name)
            files = submitted_files(self._queued_event(record.run_id), fingerprint)
            result = await run_one_iteration(
                request,
                record.run_id,
                number,
                host=host,
                journal=journal,
                lane=lane,
                stop=self.stop,
                submitted_files=files,
            )
        except NorthstarError as exc:  # this worker cannot run it as it was bound: stop the run
            journal.record_stop(
                record.run_id, exc.with_context(run_id=record.run_id, iteration=number)
            )
            journal.finish_run(record.run_id, RunStatus.FAILED)
            self._log_ending(record.run_id)
            return f"failed: {exc.code}"
        self._finish_if_settled(record)
        return result.state.value

    def _queued_event(self, run_id: str) -> dict[str, Any] | None:
        """The run's ``run_queued`` event, read once per run (it never changes)."""
        if run_id not in self._queued:
            assert self._journal is not None
            self._queued[run_id] = self._journal.first_event(run_id, "run_queued")
        return self._queued[run_id]

    def _request(self, record: RunRecord, row: dict[str, Any], fingerprint: str) -> RunRequest:
        """The run's request as this worker sees it: its recipe file must be the run's."""
        compiled = replace(load_compiled(record.recipe_path), files_dirs=self.files_dirs)
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
        )

    def _finish_if_settled(self, record: RunRecord) -> None:
        journal = self._journal
        assert journal is not None
        final = journal.finish_run_when(
            record.run_id, lambda states: finished_status(states, record.total_iterations)
        )
        if final is not None:
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
