"""A run: the journal, the binding, the runner and the repeat loop put together.

``execute_run`` is the one place where iterations of a stored recipe are started. It
opens a run in the journal, then for each iteration checks the binding, renders the
plan from that iteration's row, runs it with the journal recording every step, saves the
outputs (an output that cannot be saved leaves the iteration ``needs_review``) and
records the verdict before the next iteration may start.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from northstar.browser import BrowserHost, BrowserSession
from northstar.browser.hooks import IterationHooks, chain_hooks, hooks_for
from northstar.errors import (
    NorthstarError,
    OutputSaveFailed,
    ProgramIterationNotVerified,
)
from northstar.journal import Journal, SubmissionState
from northstar.journal.paths import run_artifacts_dir
from northstar.logs import secret_values
from northstar.plan.compiler import CompiledRecipe, bind
from northstar.plan.model import Plan
from northstar.recipe.model import Param
from northstar.recipe.params import params_fingerprint
from northstar.recipe.rows_file import LazyRows
from northstar.redaction import redact
from northstar.results import IterationResult, IterationState
from northstar.run.continuation import Unresumable, resume_plan
from northstar.run.definition_guard import DefinitionGuard
from northstar.run.failpoints import AFTER_VERDICT, failpoint_from_environ
from northstar.run.identity import RunIdentity, run_identity
from northstar.run.probe_controls import control_due, run_control
from northstar.run.recorder import JournalRecorder
from northstar.run.repeat import (
    RepeatOptions,
    RepeatSummary,
    VerifiedTally,
    may_go_past,
    repeat_program,
)
from northstar.run.retained import RetainedResults
from northstar.run.runner import ProgramRunner, open_session
from northstar.run.signin import (
    KeptSignIns,
    LaneSignIn,
    SignInPlans,
    check_plan,
    end_held,
    signed_out_or,
    state_file,
)

if TYPE_CHECKING:
    from northstar.run.monitor_feed import StepMonitor

__all__ = [
    "RowsDigest",
    "RunOutcome",
    "RunRequest",
    "StopSignal",
    "assign_lanes",
    "continue_run",
    "execute_run",
    "merge_summaries",
    "open_run",
    "rows_fingerprint",
    "run_one_iteration",
    "run_status",
]

log = structlog.get_logger("northstar.run.execution")


@dataclass(frozen=True)
class RunRequest:
    """Everything a run needs, validated before any browser starts."""

    recipe_path: Path
    compiled: CompiledRecipe
    rows: Sequence[Mapping[str, Any]]
    repeat: RepeatOptions
    base_url: str | None = None
    project: str = "default"
    profile: str | None = None
    concurrency: int = 1
    fail_fast: bool = False
    keep_context: bool = False
    monitor: bool = False  # feed each lane's steps and observations to a BehaviorMonitor
    # Positive controls of reconcile probes: the first verified submission of each submit
    # step, and with N > 0 every Nth too (``northstar.run.probe_controls``).
    probe_control_every: int = 0
    state: str | None = None  # --state: a saved signed-in state the run starts from
    keep_state: str | None = None  # --keep-state: where the run's signed-in state is kept
    on_failure: str = "stop"  # "continue": go past iterations that failed with NOT_SENT

    def row_for(self, number: int) -> Mapping[str, Any]:
        """Iteration ``number``'s values: its own row, or the one constant row."""
        return self.rows[number - 1] if len(self.rows) > 1 else self.rows[0]


class StopSignal:
    """Set by Ctrl-C / SIGTERM: the current step finishes, nothing new starts."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def request(self) -> None:
        self._event.set()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    async def until_requested(self) -> None:
        """Return once a stop is requested (a pause for a person races this)."""
        await self._event.wait()

    async def wait(self, seconds: float) -> None:
        """Wait ``seconds`` (an interval, a retry's back-off) unless a stop comes first."""
        try:
            await asyncio.wait_for(self._event.wait(), timeout=seconds)
        except TimeoutError:
            return


@dataclass
class RunOutcome:
    """What happened: the journal's run id, the verified part, and the stopping result."""

    run_id: str
    credential: str = field(repr=False)
    status: str
    summary: RepeatSummary
    results: list[IterationResult]
    error: NorthstarError | None = None
    artifacts: Path | None = None
    # Iterations that never began; ``results`` of a long run keeps only some verified ones.
    not_started: tuple[int, ...] | None = None


_STATUS_OF_STATE = (
    (IterationState.UNKNOWN, "blocked"),
    (IterationState.NEEDS_REVIEW, "needs_review"),
    (IterationState.FAILED, "failed"),
    (IterationState.STOPPED, "stopped"),
)


def run_status(results: Sequence[IterationResult], *, all_verified: bool, stopped: bool) -> str:
    """The run's status: the most serious state among its iterations, worst first.

    An unknown outcome blocks the run; then needs review, failed, stopped. A run whose
    iterations all verified but which did not do all of them was stopped.
    """
    states = {result.state for result in results}
    for state, status in _STATUS_OF_STATE:
        if state in states:
            return status
    return "verified" if all_verified or not stopped else "stopped"


class _RunContext:
    """One run's state shared by its iterations (journal, runner, artifacts folder)."""

    def __init__(
        self,
        request: RunRequest,
        host: BrowserHost,
        journal: Journal,
        stop: StopSignal,
        on_result: Callable[[IterationResult], None],
        run_id: str,
        hooks: IterationHooks | None = None,
        kept: KeptSignIns | None = None,
        on_recorded: Callable[[IterationResult], None] = lambda result: None,
    ) -> None:
        self.request = request
        self.journal = journal
        self.stop = stop
        self.on_result = on_result
        self.run_id = run_id
        self.host = host
        self._halt = False
        self.definition_guard = DefinitionGuard(request.recipe_path, request.compiled.recipe_hash)
        self.results = RetainedResults()  # bounded: the journal has every result
        self.artifacts = run_artifacts_dir(journal.path, run_id)
        self._host_hooks = hooks_for(host, self.artifacts)  # --step, --trace...: host settings
        self._hooks = chain_hooks(self._host_hooks, hooks)  # then the caller's (progress)
        self._failpoint = failpoint_from_environ()  # the runners' and the run's own
        self.runner = self._new_runner()
        self._lane_runners: dict[int, ProgramRunner] = {}
        self.identity = run_identity(request.profile, request.state)
        self._sign_ins: dict[int, LaneSignIn] = {}
        self._kept = kept  # a worker's sign-ins, kept across the iterations it serves
        self._verified_submits: Counter[str] = Counter()  # by step, for the probe controls
        # Told as soon as an iteration's verdict is journaled, before its probe controls.
        self._on_recorded = on_recorded

    def _new_runner(self, monitor: StepMonitor | None = None) -> ProgramRunner:
        return ProgramRunner(
            self.host,
            recorder=JournalRecorder(self.journal, self.run_id),
            should_stop=lambda: self.stop.requested,
            sleep=self.stop.wait,  # a retry's back-off ends at a stop request
            # so does a pause for a person (only the host's hooks pause)
            wait_for_stop=self.stop.until_requested if self._host_hooks is not None else None,
            on_failure=self._save_screenshots,
            failpoint=self._failpoint,
            hooks=self._hooks,
            monitor=monitor,
        )

    def runner_for(self, lane: int) -> ProgramRunner:
        """The shared runner, or with ``monitor`` one per lane (a monitor follows one lane)."""
        if not self.request.monitor:
            return self.runner
        if lane not in self._lane_runners:
            from northstar.monitor.behavior import BehaviorMonitor  # loaded only when asked for
            from northstar.run.monitor_feed import StepMonitor as Monitor

            self._lane_runners[lane] = self._new_runner(Monitor(BehaviorMonitor(), observe=True))
        return self._lane_runners[lane]

    def halted(self) -> bool:
        """A stop was asked for, or another lane failed under ``fail_fast``."""
        return self.stop.requested or self._halt

    async def lane(
        self, lane: int, numbers: list[int]
    ) -> tuple[RepeatSummary, NorthstarError | None]:
        """One lane's share of the iterations, each verified before the next starts."""
        structlog.contextvars.bind_contextvars(lane=lane)
        async with AsyncExitStack() as stack:
            kept = None
            tally = VerifiedTally(len(numbers))
            try:
                if self.request.keep_context:
                    kept = await stack.enter_async_context(await self._kept_session(numbers, lane))
                summary = await repeat_program(
                    lambda number: self.iteration(number, lane=lane, session=kept),
                    self.request.repeat,
                    sleep=self.stop.wait,
                    should_stop=self.halted,
                    numbers=numbers,
                    tally=tally,
                    go_past=lambda result: may_go_past(result, self.request.on_failure),
                )
            except ProgramIterationNotVerified as exc:
                self._halt = self._halt or self.request.fail_fast
                return exc.verified, exc
            except NorthstarError as exc:  # the binding broke: every lane stops
                self._halt = True
                self.journal.record_stop(self.run_id, exc.with_context(run_id=self.run_id))
                return tally.summary(), exc
        return summary, None

    async def _kept_session(
        self, numbers: list[int], lane: int
    ) -> AbstractAsyncContextManager[BrowserSession]:
        """The lane's one context for ``--keep-context``, made from its signed-in state."""
        identity = await self._signed_in(lane)
        return open_session(self.host, self.plan(numbers[0]), identity.storage_state)

    def sign_in(self, lane: int) -> LaneSignIn | None:
        """The lane's sign-in (made on first use), or ``None`` for a recipe that has none."""
        if lane not in self._sign_ins:
            sign_in = self._kept_sign_in(lane) or self._new_sign_in(lane)
            if sign_in is None:
                return None
            sign_in.on_event = lambda name, fields: self.journal.event(
                self.run_id, name, lane=lane, **fields
            )
            self._sign_ins[lane] = sign_in
        return self._sign_ins[lane]

    def _kept_sign_in(self, lane: int) -> LaneSignIn | None:
        return None if self._kept is None else self._kept.kept(self.run_id, lane)

    def _new_sign_in(self, lane: int) -> LaneSignIn | None:
        """A lane's first sign-in; a worker keeps it (and its state file) for later iterations."""
        request = self.request
        plans = SignInPlans.of(request.compiled, request.row_for(1), request.base_url)
        if plans is None:
            return None
        if self._kept is None:
            return LaneSignIn(self.host, plans, state_file(self.artifacts, lane), self.identity)
        held = self._kept.state_file(self.run_id, lane)
        sign_in = LaneSignIn(self.host, plans, held, self.identity)
        self._kept.keep(self.run_id, lane, sign_in)
        return sign_in

    async def _signed_in(self, lane: int) -> RunIdentity:
        """The identity the lane's next context starts from, signed in when the recipe asks."""
        sign_in = self.sign_in(lane)
        return self.identity if sign_in is None else await sign_in.ready()

    def end_sign_ins(self) -> None:
        """Keep the state where ``--keep-state`` says, then delete every held one.

        A worker's kept sign-ins are not this run context's to end: the worker ends them.
        """
        if self._kept is not None:
            return
        end_held([sign_in.identity for sign_in in self._sign_ins.values()], self.request.keep_state)

    def plan(self, number: int) -> Plan:
        values = self.request.row_for(number)
        return bind(self.request.compiled, values, base_url=self.request.base_url, iteration=number)

    async def iteration(
        self, number: int, *, lane: int = 1, session: BrowserSession | None = None
    ) -> IterationResult:
        earlier = self.journal.iteration_state(self.run_id, number)
        if earlier is IterationState.VERIFIED:
            # Verified before a resume (e.g. by reconciliation): never done twice.
            return IterationResult(number, IterationState.VERIFIED, reason="verified earlier")
        plan = self.plan(number)
        token = secret_values.set(plan.secrets)
        structlog.contextvars.bind_contextvars(run_id=self.run_id, iteration=number)
        try:
            result = await self._run_checked(plan, lane, session, resumed=earlier is not None)
        finally:
            secret_values.reset(token)
        self.results.add(result)
        self.on_result(result)
        return result

    async def _run_checked(
        self, plan: Plan, lane: int, session: BrowserSession | None, *, resumed: bool
    ) -> IterationResult:
        async with AsyncExitStack() as stack:
            self.definition_guard.check(plan)
            begun = False
            sign_in = self.sign_in(lane) if session is None else None
            if sign_in is not None:
                # Signed in before the iteration starts: a failure here has sent nothing.
                checked = sign_in.checked_session(plan, self._check_plan(plan))
                session, begun = await stack.enter_async_context(checked), True
            return await self._run_started(plan, lane, session, begun=begun, resumed=resumed)

    def _check_plan(self, plan: Plan) -> Plan | None:
        """The ``signed_in`` checks rendered with this iteration's values (its start URLs)."""
        values = self.request.row_for(plan.iteration)
        return check_plan(self.request.compiled, values, self.request.base_url)

    async def _run_started(
        self,
        plan: Plan,
        lane: int,
        session: BrowserSession | None,
        *,
        begun: bool,
        resumed: bool,
    ) -> IterationResult:
        number = plan.iteration
        self.journal.start_iteration(
            self.run_id,
            number,
            params_fingerprint=plan.params_fingerprint,
            lane=lane,
            row=plan.row_values,
        )
        log.info("iteration_started")
        rest = self._rest_of(plan) if resumed else plan
        if isinstance(rest, Unresumable):
            result = IterationResult(
                number,
                IterationState.NEEDS_REVIEW,
                reason_code="RESUME_POINT_UNKNOWN",
                reason=rest.reason,
                failing_step=rest.after,
                model_calls=0,
            )
        else:
            result = await self.runner_for(lane).run_iteration(
                rest, session=session, storage_state=self.identity.storage_state, begun=begun
            )
            result = await self._signed_out_or(result, lane)
        for signal in result.signals:  # advice for the report and the agent path
            self.journal.event(self.run_id, "loop_signal", iteration=number, **signal)
        if result.verified:
            result = self._save_outputs(result)
        self.journal.finish_iteration(self.run_id, result, secrets=plan.secrets)
        log.info("iteration_finished", state=str(result.state), reason=result.reason_code)
        self._on_recorded(result)
        self._failpoint(AFTER_VERDICT, number)
        if result.verified:
            await self._probe_controls(plan, lane)
        return result

    async def _probe_controls(self, plan: Plan, lane: int) -> None:
        """Run the probe of each submission this iteration verified, when a control is due.

        A control's failure is recorded (the probe is blind), never the iteration's. It
        starts from the lane's identity: signed in by the recipe's ``setup`` when it has one.
        """
        sign_in = self.sign_in(lane)
        identity = self.identity if sign_in is None else sign_in.identity
        for step_id in self._verified_by_expectations(plan):
            self._verified_submits[step_id] += 1
            if not control_due(self._verified_submits[step_id], self.request.probe_control_every):
                continue
            try:
                await run_control(
                    plan,
                    step_id,
                    run_id=self.run_id,
                    definition_hash=self.request.compiled.recipe_hash,
                    base_url=self.request.base_url,
                    host=self.host,
                    identity=identity,
                    journal=self.journal,
                )
            except NorthstarError as exc:
                log.warning("probe_control_not_run", step=step_id, code=exc.code)

    def _verified_by_expectations(self, plan: Plan) -> list[str]:
        """The iteration's submit steps with a probe whose submission its expectations verified."""
        probed = {step.id for step in plan.steps if step.is_submit and step.step.reconcile}
        return [
            s.step_id
            for s in self.journal.iteration_submissions(self.run_id, plan.iteration)
            if s.step_id in probed and s.state is SubmissionState.VERIFIED and s.decided_by is None
        ]

    async def _signed_out_or(self, result: IterationResult, lane: int) -> IterationResult:
        """A failed iteration whose signed-in state no longer holds was signed out."""
        return await signed_out_or(result, self.sign_in(lane))

    def _rest_of(self, plan: Plan) -> Plan | Unresumable:
        """A resumed iteration with a verified submission goes on after it, never before."""
        verified = {
            s.step_id: s.result_url
            for s in self.journal.iteration_submissions(self.run_id, plan.iteration)
            if s.state is SubmissionState.VERIFIED
        }
        rest = resume_plan(plan, verified)
        if rest is None or isinstance(rest, Unresumable):
            return plan if rest is None else rest
        self.journal.event(
            self.run_id,
            "iteration_continued",
            iteration=plan.iteration,
            after=rest.after,
            entry=rest.entry,
        )
        log.info("iteration_continued", after=rest.after)
        return rest.plan

    def _save_outputs(self, result: IterationResult) -> IterationResult:
        """Write the outputs file and journal rows; failure means the run needs review."""
        try:
            self.artifacts.mkdir(parents=True, exist_ok=True)
            path = self.artifacts / f"iteration-{result.iteration:04d}.json"
            path.write_text(json.dumps(dict(result.outputs), indent=2, sort_keys=True))
            self.journal.save_outputs(self.run_id, result.iteration, result.outputs)
        except (OSError, NorthstarError) as exc:
            error = OutputSaveFailed(
                f"outputs of iteration {result.iteration} could not be saved: "
                f"{exc.__class__.__name__}",
                iteration=result.iteration,
            )
            return replace(
                result,
                state=IterationState.NEEDS_REVIEW,
                reason_code=error.code,
                reason=error.message,
            )
        return result

    def _save_screenshots(self, plan: Plan, shots: Mapping[str, bytes]) -> None:
        """Screenshots of each tab role at a failure; a failure to save is only logged."""
        try:
            self.artifacts.mkdir(parents=True, exist_ok=True)
            for role, png in shots.items():
                name = f"iteration-{plan.iteration:04d}-failure-{role}.png"
                (self.artifacts / name).write_bytes(png)
        except OSError as exc:
            log.warning("screenshot_not_saved", error=redact(str(exc), plan.secrets))


def rows_fingerprint(request: RunRequest) -> str:
    """One digest over every row's parameter fingerprint (secrets hashed first).

    Rows read from a params file carry the digest their check took (``RowsDigest``), so a
    run of 100,000 rows does not type them all again before its first iteration.
    """
    if isinstance(request.rows, LazyRows):
        return request.rows.fingerprint
    digest = RowsDigest(request.compiled.recipe.params)
    for row in request.rows:
        digest.add(row)
    return digest.hexdigest()


class RowsDigest:
    """``rows_fingerprint`` taken a row at a time: row fingerprints joined by newlines."""

    def __init__(self, specs: Mapping[str, Param]) -> None:
        self._specs = specs
        self._digest = hashlib.sha256()
        self._rows = 0

    def add(self, row: Mapping[str, Any]) -> None:
        if self._rows:
            self._digest.update(b"\n")
        self._digest.update(params_fingerprint(self._specs, row).encode())
        self._rows += 1

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def open_run(request: RunRequest, journal: Journal) -> tuple[str, str]:
    """Record a new run bound to the request; returns ``(run_id, credential)``.

    The credential is also written to ``runs/RUN_ID/credential`` (mode 0600) so that the
    person who started the run can reconcile or resume it; it is never logged.
    """
    run_id, credential = journal.create_run(
        recipe_path=str(request.recipe_path.resolve()),
        recipe_name=request.compiled.recipe.name,
        definition_hash=request.compiled.recipe_hash,
        project=request.project,
        profile=request.profile or "",
        params_fingerprint=rows_fingerprint(request),
        total_iterations=request.repeat.count,
        options={
            "interval_s": request.repeat.interval_s,
            "base_url": request.base_url,
            # --timeout: the step time limit of a recipe that sets none; a worker applies it.
            "timeout": request.compiled.recipe.timeout,
            "concurrency": request.concurrency,  # a resume deals its rest over as many lanes
            "fail_fast": request.fail_fast,
            "keep_context": request.keep_context,
            "probe_control_every": request.probe_control_every,
            "on_failure": request.on_failure,
        },
    )
    _save_credential(run_artifacts_dir(journal.path, run_id), credential)
    return run_id, credential


def _save_credential(folder: Path, credential: str) -> None:
    """Only the owner may read it; if it cannot be written, ``--credential`` is the way."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = os.open(folder / "credential", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(handle, "w") as file:
            file.write(credential)
    except OSError as exc:
        log.warning("credential_not_saved", folder=str(folder), error=exc.__class__.__name__)


async def execute_run(
    request: RunRequest,
    *,
    host: BrowserHost,
    journal: Journal,
    stop: StopSignal | None = None,
    on_result: Callable[[IterationResult], None] = lambda result: None,
    on_start: Callable[[str], None] = lambda run_id: None,
    hooks: IterationHooks | None = None,
) -> RunOutcome:
    """Start a run and do every requested iteration; stop at the first not verified.

    ``hooks`` are called at each step after the host's own (a progress display's feed).
    """
    run_id, credential = open_run(request, journal)
    log.info(
        "run_started",
        run_id=run_id,
        recipe=request.compiled.recipe.name,
        iterations=request.repeat.count,
    )
    on_start(run_id)
    return await continue_run(
        request,
        run_id,
        credential,
        host=host,
        journal=journal,
        stop=stop,
        on_result=on_result,
        hooks=hooks,
    )


def assign_lanes(numbers: Sequence[int], lanes: int) -> list[list[int]]:
    """Deal iterations to lanes in turn (1, 2, 1, 2, ...), so early rows run early."""
    count = max(1, min(lanes, len(numbers)))
    return [list(numbers[lane::count]) for lane in range(count)]


def merge_summaries(requested: int, parts: Sequence[RepeatSummary]) -> RepeatSummary:
    """One summary of every lane's verified iterations, in iteration order."""
    return RepeatSummary.merge(requested, parts)


async def continue_run(
    request: RunRequest,
    run_id: str,
    credential: str,
    *,
    host: BrowserHost,
    journal: Journal,
    numbers: Sequence[int] | None = None,
    stop: StopSignal | None = None,
    on_result: Callable[[IterationResult], None] = lambda result: None,
    hooks: IterationHooks | None = None,
) -> RunOutcome:
    """Do the given iterations of a recorded run (every one of a new run; a resume's rest).

    With ``concurrency`` K the iterations are dealt to K lanes that share the browser;
    each lane verifies an iteration before it starts its next. A lane that stops at an
    unverified iteration leaves the others going, unless ``fail_fast``; a broken binding
    stops every lane.
    """
    run = _RunContext(request, host, journal, stop or StopSignal(), on_result, run_id, hooks)
    numbers = list(range(1, request.repeat.count + 1) if numbers is None else numbers)
    lanes = assign_lanes(numbers, request.concurrency)
    try:
        ended = await asyncio.gather(
            *(run.lane(lane, share) for lane, share in enumerate(lanes, start=1))
        )
    finally:
        run.end_sign_ins()  # the signed-in state is a secret: it does not outlive the run
    summary = merge_summaries(len(numbers), [part for part, _ in ended])
    errors = [error for _, error in ended if error is not None]
    results = run.results.in_order()
    status = run_status(results, all_verified=summary.all_verified, stopped=run.halted())
    if any(not isinstance(error, ProgramIterationNotVerified) for error in errors):
        status = "failed"  # the binding broke: no iteration of this run may go on
    journal.finish_run(run_id, status)
    structlog.contextvars.unbind_contextvars("run_id", "iteration", "lane")
    error = min(errors, key=lambda e: e.context.get("iteration") or 0) if errors else None
    unstarted = run.results.not_started(summary.requested)
    return RunOutcome(run_id, credential, status, summary, results, error, run.artifacts, unstarted)


async def run_one_iteration(
    request: RunRequest,
    run_id: str,
    number: int,
    *,
    host: BrowserHost,
    journal: Journal,
    lane: int = 1,
    stop: StopSignal | None = None,
    submitted_files: tuple[str, ...] | None = None,
    kept: KeptSignIns | None = None,
    on_recorded: Callable[[IterationResult], None] = lambda result: None,
) -> IterationResult:
    """One iteration of a recorded run, checked and journaled as a lane does it.

    For a front end that deals iterations itself (a distributed worker): the binding
    check, the journal records, the outputs and the verdict are those of ``continue_run``;
    ``submitted_files`` are the digests the iteration's selected files must have;
    ``kept``: the front end's sign-ins, so a lane signs in once, not once per iteration;
    ``on_recorded``: called once the verdict is journaled, before the work that follows it
    (a positive probe control), so a front end stopped then knows nothing is in progress.
    """
    run = _RunContext(
        request,
        host,
        journal,
        stop or StopSignal(),
        lambda result: None,
        run_id,
        kept=kept,
        on_recorded=on_recorded,
    )
    run.definition_guard.submitted_files = submitted_files
    try:
        return await run.iteration(number, lane=lane)
    finally:
        run.end_sign_ins()
