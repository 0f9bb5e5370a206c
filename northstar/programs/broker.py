"""``ProgramBroker``: a run of a program, one child process per iteration.

For each run: an execution id and a credential from the journal (only its hash is kept;
the file beside the journal lets its owner reconcile or resume). For each iteration, in
this order: the definition (declaration and local code) and the selected files are
checked (``DEFINITION_CHANGED`` / ``FILE_CHANGED`` before anything is opened or sent),
the run's sign-in is made ready (a declaration's ``setup`` runs once per run, and its
``signed_in`` checks before each later iteration, by ``northstar.run.signin`` as for a
recipe: ``SIGN_IN_FAILED`` here has sent nothing), the iteration is started in the
journal, a fresh browser context made from the run's identity opens each tab role, the
program runs as a child process whose every call the host carries out, then the
declaration's ``done_when`` checks run in the browser, the outputs are saved and the
verdict (``northstar.programs.verdict``) is written. Repeat is not retry: a program is
never started again for the same iteration; a not-verified iteration ends the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, nullcontext
from dataclasses import replace

import structlog

from northstar.agent.settings import AgentSettings
from northstar.browser import BrowserHost, BrowserSession
from northstar.errors import (
    DefinitionChanged,
    FileChanged,
    NorthstarError,
    OutputSaveFailed,
    ProgramIterationNotVerified,
)
from northstar.journal import Journal
from northstar.journal.paths import run_artifacts_dir
from northstar.plan.compiler import bind
from northstar.plan.model import Plan
from northstar.programs.calls import (
    IterationCalls,
    ProgramReport,
    credential_checker,
    fingerprint_secret,
)
from northstar.programs.child_process import ProgramExit, run_program_process
from northstar.programs.declaration import ProgramDeclaration
from northstar.programs.program_file import definition_digest, read_program_source
from northstar.programs.session import ProgramSession
from northstar.programs.verdict import IterationEvidence, program_verdict
from northstar.results import IterationResult, IterationState, StepResult
from northstar.run.execution import RunOutcome, RunRequest, StopSignal, open_run, run_status
from northstar.run.failpoints import Failpoint, failpoint_from_environ
from northstar.run.identity import run_identity
from northstar.run.repeat import RepeatSummary, repeat_program
from northstar.run.runner import open_session
from northstar.run.signin import (
    LaneSignIn,
    SignInPlans,
    check_plan,
    end_held,
    signed_out_or,
    state_file,
)

__all__ = ["ProgramBroker"]

VERIFIED = IterationState.VERIFIED

log = structlog.get_logger("northstar.programs")


class ProgramBroker:
    """Runs a program's iterations on one browser host, with one journal."""

    def __init__(
        self,
        request: RunRequest,
        declaration: ProgramDeclaration,
        *,
        host: BrowserHost,
        journal: Journal,
        stop: StopSignal | None = None,
        on_result: Callable[[IterationResult], None] = lambda result: None,
        settings: AgentSettings | None = None,
        failpoint: Failpoint | None = None,
    ) -> None:
        self.request, self.declaration = request, declaration
        self.host, self.journal = host, journal
        self.stop = stop or StopSignal()
        self.on_result = on_result
        self.settings = settings or AgentSettings(action_timeout_ms=declaration.timeout)
        self.results: list[IterationResult] = []
        self._files: dict[str, str] = {}
        self.run_id, self._credential = "", ""
        self._failpoint = failpoint or failpoint_from_environ()
        self.program_pid: int | None = None  # the current iteration's program process
        # What every context starts from: --state, else --profile (else the host's own).
        self.identity = run_identity(request.profile, request.state)
        self._sign_in: LaneSignIn | None = None  # the declaration's setup, once per run

    async def run(self, on_start: Callable[[str], None] = lambda run_id: None) -> RunOutcome:
        """Open the run, do its iterations, record how it ended."""
        self.run_id, self._credential = open_run(self.request, self.journal)
        self.journal.event(self.run_id, "program_run_started", program=self.declaration.name)
        on_start(self.run_id)
        return await self.continue_run(range(1, self.request.repeat.count + 1))

    def attach(self, run_id: str, credential: str) -> None:
        """Go on with a recorded run (a resume) instead of opening a new one."""
        self.run_id, self._credential = run_id, credential

    async def continue_run(self, numbers: range | list[int]) -> RunOutcome:
        error: NorthstarError | None = None
        self._sign_in = self._new_sign_in()
        try:
            summary = await self._repeat(numbers)
        except NorthstarError as exc:
            error = exc.with_context(run_id=self.run_id)
            summary = RepeatSummary.of(len(numbers), [r for r in self.results if r.verified])
            if not isinstance(exc, ProgramIterationNotVerified):  # the binding broke
                self.journal.record_stop(self.run_id, error)
        status = run_status(
            self.results, all_verified=summary.all_verified, stopped=self.stop.requested
        )
        if error is not None and not isinstance(error, ProgramIterationNotVerified):
            status = "failed"  # the binding broke: no iteration of this run may go on
        self.journal.finish_run(self.run_id, status)
        artifacts = run_artifacts_dir(self.journal.path, self.run_id)
        return RunOutcome(
            self.run_id, self._credential, status, summary, self.results, error, artifacts
        )

    async def _repeat(self, numbers: range | list[int]) -> RepeatSummary:
        """The iterations; the signed-in state is a secret that does not outlive them."""
        try:
            return await repeat_program(
                self.iteration,
                self.request.repeat,
                sleep=self.stop.wait,
                should_stop=lambda: self.stop.requested,
                numbers=list(numbers),
            )
        finally:
            held = [self._sign_in.identity] if self._sign_in else []
            end_held(held, self.request.keep_state)

    def _new_sign_in(self) -> LaneSignIn | None:
        """The run's sign-in (programs run one lane), or ``None`` for a declaration without."""
        request = self.request
        plans = SignInPlans.of(request.compiled, request.row_for(1), request.base_url)
        if plans is None:
            return None
        held_at = state_file(run_artifacts_dir(self.journal.path, self.run_id), lane=1)
        return LaneSignIn(
            self.host,
            plans,
            held_at,
            self.identity,
            on_event=lambda name, fields: self.journal.event(self.run_id, name, lane=1, **fields),
        )

    # One iteration

    def _plan(self, number: int) -> Plan:
        request = self.request
        plan = bind(
            request.compiled, request.row_for(number), base_url=request.base_url, iteration=number
        )
        return replace(plan, steps=())

    def _check_binding(self, plan: Plan) -> None:
        """The definition and the selected files as the run started, or nothing is sent."""
        path = self.request.recipe_path
        try:
            current = definition_digest(path, read_program_source(path))
        except NorthstarError:
            current = None  # no longer a readable program: certainly not the same definition
        if current != self.request.compiled.recipe_hash:
            raise DefinitionChanged(
                f"the program {path} or a module it imports changed since the run started",
                iteration=plan.iteration,
                path=str(path),
            )
        for file, digest in plan.files:
            if self._files.setdefault(file, digest) != digest:
                raise FileChanged(
                    f"the selected file {file} changed since the run started",
                    iteration=plan.iteration,
                    path=file,
                )

    async def iteration(self, number: int) -> IterationResult:
        plan = self._plan(number)
        self._check_binding(plan)
        async with AsyncExitStack() as stack:
            signed_in = None
            if self._sign_in is not None:
                # Signed in before the iteration starts: SIGN_IN_FAILED here sent nothing.
                check = check_plan(
                    self.request.compiled, self.request.row_for(number), self.request.base_url
                )
                checked = self._sign_in.checked_session(plan, check)
                signed_in = await stack.enter_async_context(checked)
            return await self._recorded(plan, signed_in)

    async def _recorded(self, plan: Plan, signed_in: BrowserSession | None) -> IterationResult:
        """The iteration in the journal, from start to verdict; ``signed_in``: its context."""
        number = plan.iteration
        self.journal.start_iteration(
            self.run_id, number, params_fingerprint=plan.params_fingerprint, row=plan.row_values
        )
        structlog.contextvars.bind_contextvars(run_id=self.run_id, iteration=number)
        started = time.monotonic()
        report: ProgramReport | None = None
        steps: tuple[StepResult, ...] = ()
        try:
            evidence, report, steps = await self._in_browser(plan, signed_in)
        except NorthstarError as exc:  # a tab role could not be opened, or a check could not run
            open_ones = len(self.journal.open_submissions(self.run_id, number))
            evidence = IterationEvidence(
                exit_code=None, completed=False, open_submissions=open_ones, error_code=exc.code
            )
        verdict = program_verdict(replace(evidence, stopped=self.stop.requested))
        result = IterationResult(
            iteration=number,
            state=verdict.state,
            steps=steps,
            outputs=dict(report.outputs) if report and verdict.state is VERIFIED else {},
            duration_ms=round((time.monotonic() - started) * 1000, 3),
            reason_code=verdict.reason_code,
            reason=verdict.reason,
            model_calls=report.model_calls if report else None,
        )
        result = await signed_out_or(result, self._sign_in)  # met the sign-in page instead
        self.journal.finish_iteration(self.run_id, result, secrets=plan.secrets)
        self.results.append(result)
        self.on_result(result)
        log.info("program_iteration_finished", state=result.state.value, reason=result.reason)
        return result

    async def _in_browser(
        self, plan: Plan, signed_in: BrowserSession | None
    ) -> tuple[IterationEvidence, ProgramReport, tuple[StepResult, ...]]:
        async with self._context(plan, signed_in) as browser:
            for role, tab in plan.tabs.items():
                if not browser.has_tab(role):  # the sign-in check opened it at its start
                    await browser.open_tab(tab, timeout_ms=self.settings.open_timeout_ms)
            session = self._session(plan, browser)
            calls = IterationCalls(
                session,
                self.journal,
                credential_checker(self.journal, self.run_id),
                tuple(self.declaration.outputs),
                self.settings.action_timeout_ms,
            )
            ended = await self._run_child(plan, calls)
            failed = await self._done_when(plan, session) if ended.code == 0 else ()
        evidence = self._evidence(plan, ended, calls, failed, session.unverified)
        return evidence, calls.report, tuple(session.finished)

    def _context(
        self, plan: Plan, signed_in: BrowserSession | None
    ) -> AbstractAsyncContextManager[BrowserSession]:
        """The iteration's fresh context: the checked, signed-in one, else one made now."""
        if signed_in is not None:
            return nullcontext(signed_in)
        return open_session(self.host, plan, self.identity.storage_state)

    def _session(self, plan: Plan, browser: BrowserSession) -> ProgramSession:
        """The agent path's session core on this iteration's context, its steps kept."""
        return ProgramSession(
            self.run_id, plan, browser, self.journal, self.settings,
            secret=fingerprint_secret(self._credential), failpoint=self._failpoint,
        )  # fmt: skip

    async def _run_child(self, plan: Plan, calls: IterationCalls) -> ProgramExit:
        stop = asyncio.Event()
        watcher = asyncio.ensure_future(self._forward_stop(stop))
        try:
            return await run_program_process(
                self.request.recipe_path.resolve(),
                calls,
                run_id=self.run_id,
                credential=self._credential,
                iteration=plan.iteration,
                log_file=run_artifacts_dir(self.journal.path, self.run_id)
                / f"program-{plan.iteration}.log",
                secrets=plan.secrets,
                stop=stop,
                time_limit_s=self.declaration.timeout_s,
                on_started=self._started,
            )
        finally:
            watcher.cancel()

    def _started(self, pid: int) -> None:
        self.program_pid = pid

    async def _forward_stop(self, stop: asyncio.Event) -> None:
        await self.stop.until_requested()
        stop.set()

    async def _done_when(self, plan: Plan, session: ProgramSession) -> tuple[str, ...]:
        """Each ``done_when`` check, journaled as a passive step; the ones that did not hold."""
        failed = []
        first = next(iter(plan.tabs))
        for check in plan.done_when:
            answer = await session.core.check(
                check.tab or first, check, self.settings.check_timeout_ms
            )
            if not answer.held:
                failed.append(answer.check)
        return tuple(failed)

    def _evidence(
        self,
        plan: Plan,
        ended: ProgramExit,
        calls: IterationCalls,
        failed: tuple[str, ...],
        why: dict[str, str],
    ) -> IterationEvidence:
        report = calls.report
        missing = tuple(n for n in self.declaration.outputs if n not in report.outputs)
        saved = True
        if (
            report.completed
            and ended.code == 0
            and not (missing or failed or report.failed_verifications)
        ):
            saved = self._save_outputs(plan, report.outputs)
        open_ones = self.journal.open_submissions(self.run_id, plan.iteration)
        return IterationEvidence(
            exit_code=ended.code,
            completed=report.completed,
            missing_outputs=missing if report.completed else (),
            outputs_saved=saved,
            failed_checks=failed,
            failed_verifications=tuple(report.failed_verifications),
            open_submissions=len(open_ones),
            open_steps=tuple(_open_step(s.step_id, why) for s in open_ones),
            time_limit_s=self.declaration.timeout_s if ended.timed_out else None,
        )

    def _save_outputs(self, plan: Plan, outputs: dict[str, str]) -> bool:
        try:
            self.journal.save_outputs(self.run_id, plan.iteration, outputs)
        except OutputSaveFailed:
            return False
        return True


def _open_step(step_id: str, why: dict[str, str]) -> str:
    """A submission without a result, by its step, and why if the host knows."""
    return f"{step_id} ({why[step_id]})" if step_id in why else step_id
