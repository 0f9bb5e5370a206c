"""ProgramRunner: one iteration of a plan against a browser session, step by step.

The runner knows the order of things (open the role's tab, act, check the step's
expectations, then ``done_when`` and outputs) and turns every ``NorthstarError`` into a
recorded step failure. Each step goes through the host's one dispatch routine
(``northstar.run.dispatch``), which journals it and keeps a submission at most once; the
runner's own part is the retry of safe steps around it, the pauses and the hooks. It
never retries a submission and never clicks "something close": the adapter raises, the
runner records, the iteration is not verified.

A stop request (Ctrl-C) lets the step in progress finish and starts no other. Two waits
inside a step end early instead: a pause for a person (``--step``, ``--pause-on-failure``)
and a retry's back-off. A step whose pause was cut short is journaled ``skipped`` (its
action never ran); a step whose retry was given up is journaled with its last failure.
Either way the iteration is ``stopped``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from typing import TYPE_CHECKING

import structlog

from northstar.browser import BrowserHost, BrowserSession, Reading
from northstar.browser.hooks import IterationHooks, NoHooks
from northstar.errors import ExpectationFailed, NorthstarError, TabClosed
from northstar.plan.model import BoundStep, Plan
from northstar.recipe.model import Check, FieldValueCheck
from northstar.results import Evidence, IterationResult, IterationState, StepResult, StepStatus
from northstar.run.diagnosis import DiagnosisRecorder, StepDiagnosis
from northstar.run.dispatch import (
    IterationRecorder,
    NullRecorder,
    StepDispatch,
    unexpected_after_dispatch,
)
from northstar.run.failpoints import Failpoint, no_failpoint
from northstar.run.retry import retrying

if TYPE_CHECKING:
    from northstar.run.monitor_feed import StepMonitor

__all__ = [
    "IterationRecorder",
    "NullRecorder",
    "ProgramRunner",
    "apply_regex",
    "open_session",
    "unexpected_after_dispatch",
]

log = structlog.get_logger("northstar.run.runner")


class _Attempt:
    """The current attempt of a step: its evidence, and how many there were."""

    def __init__(self) -> None:
        self.count = 0
        self.evidence: list[Evidence] = []
        self.result_url: str | None = None  # a verified submission's page: resume goes on there
        self.failure: NorthstarError | None = None  # the last attempt's, before a retry

    def begin(self) -> None:
        self.count += 1
        self.evidence = []


class _Dispatches:
    """Whether any submission of this iteration was dispatched (or may have been)."""

    def __init__(self) -> None:
        self.any = False


class _StopRequested(Exception):
    """Internal: a stop was requested; no further step starts.

    ``result`` is the step the stop cut short (skipped, or failed before its retry), if any.
    """

    def __init__(self, result: StepResult | None = None) -> None:
        super().__init__("stopped on request")
        self.result = result


class _StopInStep(Exception):
    """Internal: a stop ended a wait inside a step; ``error`` is its last failure, if any."""

    def __init__(self, error: NorthstarError | None = None) -> None:
        super().__init__("stopped inside a step")
        self.error = error


class _StepFailed(Exception):
    """Internal: carries a finished failing step out of the step loop."""

    def __init__(self, result: StepResult, error: NorthstarError, state: IterationState) -> None:
        super().__init__(error.message)
        self.result = result
        self.error = error
        self.state = state


def open_session(
    host: BrowserHost, plan: Plan, storage_state: str | None
) -> AbstractAsyncContextManager[BrowserSession]:
    """The host's session for ``plan``, made from ``storage_state`` when there is one."""
    if storage_state is None:
        return host.session(plan)  # hosts written before signed-in states take no such word
    return host.session(plan, storage_state=storage_state)


class ProgramRunner:
    """Runs one iteration of a plan and returns its ``IterationResult``."""

    def __init__(
        self,
        host: BrowserHost,
        *,
        recorder: IterationRecorder | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        should_stop: Callable[[], bool] = lambda: False,
        on_failure: Callable[[Plan, Mapping[str, bytes]], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        failpoint: Failpoint = no_failpoint,
        monitor: StepMonitor | None = None,
        hooks: IterationHooks | None = None,
        wait_for_stop: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self._monitor = monitor
        self._hooks = hooks or NoHooks()  # pauses, traces, snapshots: see northstar.browser.hooks
        # A hook may pause for a person: it is raced against a stop request, if one can come.
        self._wait_for_stop = wait_for_stop if hooks is not None else None
        self._sleep = sleep
        self._failpoint = failpoint
        self._host = host
        self._recorder = recorder or NullRecorder()
        # A recorder that keeps diagnoses (the journal's) gets one when a recipe breaks.
        self._diagnosis = (
            StepDiagnosis(self._recorder) if isinstance(self._recorder, DiagnosisRecorder) else None
        )
        self._monotonic = monotonic
        self._should_stop = should_stop
        self._on_failure = on_failure

    async def run_iteration(
        self,
        plan: Plan,
        *,
        session: BrowserSession | None = None,
        storage_state: str | None = None,
        begun: bool = False,
    ) -> IterationResult:
        """Execute every step, then ``done_when`` and outputs; never raises a NorthstarError.

        Each iteration gets a fresh browser context (made from ``storage_state``, the
        run's signed-in state, when given), unless a ``session`` kept across iterations
        is given; that one starts the iteration with its tabs closed and its cookies kept,
        unless ``begun``: a session made for this iteration, whose tabs (opened at their
        start by the sign-in check) the steps go on with.
        """
        started = self._monotonic()
        results: list[StepResult] = []
        dispatches = _Dispatches()
        try:
            async with (
                self._session_for(plan, session, storage_state, begun) as session,
                self._hooks.around(session, plan),
            ):
                try:
                    outputs = await self._run_all(session, plan, results, dispatches)
                except _StepFailed as failing:
                    if self._diagnosis is not None:
                        step_id = failing.result.step_id
                        await self._diagnosis.at_failure(session, plan, step_id, failing.error)
                    await self._capture_failure(session, plan)
                    # A stop ends a pause at the failure early; the failure stands.
                    await self._unless_stopped(
                        self._hooks.at_failure(session, plan, failing.result)
                    )
                    raise
        except _StepFailed as failed:
            results.append(failed.result)
            return self._verdict(plan, results, failed.state, started, error=failed.error)
        except _StopRequested as stopped:
            results.extend([stopped.result] if stopped.result is not None else [])
            return self._verdict(plan, results, IterationState.STOPPED, started, stopped=True)
        except NorthstarError as exc:  # the session itself failed to start or close
            return self._verdict(plan, results, IterationState.FAILED, started, error=exc)
        except Exception as exc:
            if not dispatches.any:
                raise  # nothing was sent: a bug shows as itself
            error = unexpected_after_dispatch(exc, "the iteration")
            return self._verdict(plan, results, IterationState.UNKNOWN, started, error=error)
        return self._verdict(plan, results, IterationState.VERIFIED, started, outputs=outputs)

    @asynccontextmanager
    async def _session_for(
        self, plan: Plan, kept: BrowserSession | None, storage_state: str | None, begun: bool
    ) -> AsyncIterator[BrowserSession]:
        if kept is None:
            async with open_session(self._host, plan, storage_state) as fresh:
                yield fresh
            return
        if not begun:
            await kept.begin(plan)
        yield kept

    async def _run_all(
        self,
        session: BrowserSession,
        plan: Plan,
        results: list[StepResult],
        dispatches: _Dispatches,
    ) -> dict[str, str]:
        extracted: dict[str, str] = {}  # extract steps read the page as it is at their step
        for step in plan.steps:
            if self._should_stop():
                raise _StopRequested
            results.append(await self._run_step(session, plan, step, extracted, dispatches))
        results.append(await self._check_done(session, plan))
        return await self._read_outputs(session, plan, extracted)

    async def _capture_failure(self, session: BrowserSession, plan: Plan) -> None:
        """Screenshots of every open tab role, handed to the failure hook."""
        if self._on_failure is None:
            return
        shots: dict[str, bytes] = {}
        for role in plan.tabs:
            if session.has_tab(role):
                try:
                    shot = await session.screenshot(role)
                except NorthstarError:
                    continue  # a tab that cannot be pictured must not hide the real failure
                if shot is not None:
                    shots[role] = shot
        self._on_failure(plan, shots)

    async def _run_step(
        self,
        session: BrowserSession,
        plan: Plan,
        step: BoundStep,
        extracted: dict[str, str],
        dispatches: _Dispatches,
    ) -> StepResult:
        """One step through the host's dispatch, retried per its policy while nothing was sent."""
        feed = self._monitor.feed(session) if self._monitor is not None else None
        dispatch = StepDispatch(
            self._recorder,
            plan,
            step,
            failpoint=self._failpoint,
            feed=feed,
            monotonic=self._monotonic,
        )
        dispatch.start()
        log.debug("step_started", step=step.id, tab=step.tab, kind=step.kind)
        attempt = _Attempt()
        try:
            async for trial in retrying(
                step.retry, dispatched=lambda: dispatch.dispatched, sleep=self._sleep
            ):
                if attempt.failure is not None and self._should_stop():
                    raise _StopInStep(attempt.failure)  # the back-off ended: no retry
                with trial:
                    attempt.begin()
                    try:
                        await self._attempt(session, plan, dispatch, attempt, extracted)
                    except NorthstarError as exc:
                        attempt.failure = exc
                        raise
        except _StopInStep as stop:
            raise await self._stopped_step(dispatch, attempt, stop.error) from None
        except Exception as exc:
            failure = await dispatch.failed(
                exc, attempt.evidence, attempts=attempt.count, earlier_dispatch=dispatches.any
            )
            dispatches.any = dispatches.any or failure.unknown
            state = IterationState.UNKNOWN if failure.unknown else IterationState.FAILED
            raise _StepFailed(failure.result, failure.error, state) from exc
        dispatches.any = dispatches.any or dispatch.dispatched
        result = await dispatch.passed(
            attempt.evidence, attempts=attempt.count, result_url=attempt.result_url
        )
        if self._diagnosis is not None:
            self._diagnosis.step_passed(plan, step)
        await self._hooks.after_step(session, plan, step, result)
        return result

    async def _stopped_step(
        self, dispatch: StepDispatch, attempt: _Attempt, error: NorthstarError | None
    ) -> _StopRequested:
        """Journal a step that a stop cut short: failed before a retry, else skipped."""
        if error is None:
            return _StopRequested(dispatch.skipped(attempt.evidence, attempts=attempt.count))
        failure = await dispatch.failed(error, attempt.evidence, attempts=attempt.count)
        return _StopRequested(failure.result)

    async def _unless_stopped(self, hook: Awaitable[None]) -> bool:
        """Await ``hook`` unless a stop request comes first (then cancel it); True if stopped.

        A pause waits for a person who may never come back; Ctrl-C must still end it.
        """
        if self._wait_for_stop is None:
            await hook
            return False
        waiting = asyncio.ensure_future(hook)
        stop = asyncio.ensure_future(self._wait_for_stop())
        try:
            done, _ = await asyncio.wait((waiting, stop), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not waiting.done():
                waiting.cancel()
        if waiting in done:
            waiting.result()  # a hook's error fails the step as before
            return False
        with suppress(asyncio.CancelledError):
            await waiting  # let the cancelled pause unwind before the step goes on
        return True

    async def _attempt(
        self,
        session: BrowserSession,
        plan: Plan,
        dispatch: StepDispatch,
        attempt: _Attempt,
        extracted: dict[str, str],
    ) -> None:
        step = dispatch.step
        attempt.evidence.extend(await self._ensure_tab(session, plan, step))
        if self._monitor is not None:
            await self._monitor.before_action(session, step)
        if attempt.count == 1:
            if await self._unless_stopped(self._hooks.before_step(session, plan, step)):
                raise _StopInStep  # stopped during the pause before the step: it does not act
            if self._diagnosis is not None:
                await self._diagnosis.before_step(session, plan, step)

        def check(expected: Check) -> Awaitable[Evidence]:
            tab = expected.tab or step.tab
            return session.check(expected, tab=tab, timeout_ms=step.timeout_ms)

        if step.is_passive:
            attempt.evidence.extend(await self._passive(session, step, extracted))
            attempt.evidence.extend(await dispatch.expectations(check))
            return
        performed = await dispatch.act(
            lambda before: session.perform(step, before_dispatch=before),
            check,
            lambda: session.send_trace(step.tab),
        )
        attempt.evidence.extend(performed)
        if dispatch.dispatched:
            attempt.result_url = await _result_url(session, step)

    async def _ensure_tab(
        self, session: BrowserSession, plan: Plan, step: BoundStep
    ) -> tuple[Evidence, ...]:
        if session.has_tab(step.tab):
            return ()
        tab = plan.tabs[step.tab]
        if tab.start is None:
            raise TabClosed(
                f"tab {step.tab!r} is not open: it was closed, or step {tab.opened_by!r} "
                "did not open it",
                fix="Check which step closes the popup, or that the opening step opens one.",
            )
        return (await session.open_tab(tab, timeout_ms=step.timeout_ms),)

    async def _passive(
        self, session: BrowserSession, step: BoundStep, extracted: dict[str, str]
    ) -> tuple[Evidence, ...]:
        body = step.step
        if body.wait_for is not None or body.verify_outcome is not None:
            check = body.wait_for or body.verify_outcome
            assert check is not None
            return (
                await session.check(check, tab=check.tab or step.tab, timeout_ms=step.timeout_ms),
            )
        if body.verify_field is not None:
            return (
                await session.check(
                    _field_check(body.verify_field), tab=step.tab, timeout_ms=step.timeout_ms
                ),
            )
        extract = body.extract
        assert extract is not None
        reading = Reading(extract.source, step.tab, extract.target, extract.attribute)
        raw = await session.read(reading, timeout_ms=step.timeout_ms)
        extracted[extract.as_] = apply_regex(raw, extract.regex, extract.as_)
        return (Evidence("extract", step.tab, f"read {extract.as_} from {extract.source}", True),)

    async def _check_done(self, session: BrowserSession, plan: Plan) -> StepResult:
        """``done_when`` as a pseudo-step, so it is journaled and reported like one."""
        started = self._monotonic()
        evidence: list[Evidence] = []
        try:
            for check in plan.done_when:
                tab = check.tab or ""
                if not session.has_tab(tab):
                    raise TabClosed(f"tab {tab!r} is not open for done_when", tab=tab)
                evidence.append(
                    await session.check(check, tab=tab, timeout_ms=plan.default_timeout_ms)
                )
        except NorthstarError as exc:
            exc.with_context(step="done_when", iteration=plan.iteration)
            result = StepResult(
                "done_when",
                "",
                "done_when",
                StepStatus.FAILED,
                self._elapsed_ms(started),
                tuple(evidence),
                exc.to_dict(),
            )
            raise _StepFailed(result, exc, IterationState.FAILED) from exc
        return StepResult(
            "done_when",
            "",
            "done_when",
            StepStatus.PASSED,
            self._elapsed_ms(started),
            tuple(evidence),
        )

    async def _read_outputs(
        self, session: BrowserSession, plan: Plan, extracted: dict[str, str]
    ) -> dict[str, str]:
        outputs = dict(extracted)
        try:
            for name, output in plan.outputs:
                reading = Reading(output.source, output.tab, output.target, output.attribute)
                raw = await session.read(reading, timeout_ms=plan.default_timeout_ms)
                outputs[name] = apply_regex(raw, output.regex, name)
        except NorthstarError as exc:
            exc.with_context(step="outputs", iteration=plan.iteration)
            result = StepResult("outputs", "", "outputs", StepStatus.FAILED, 0.0, (), exc.to_dict())
            raise _StepFailed(result, exc, IterationState.FAILED) from exc
        return outputs

    def _elapsed_ms(self, started: float) -> float:
        return round((self._monotonic() - started) * 1000, 3)

    def _verdict(
        self,
        plan: Plan,
        results: list[StepResult],
        state: IterationState,
        started: float,
        *,
        outputs: dict[str, str] | None = None,
        error: NorthstarError | None = None,
        stopped: bool = False,
    ) -> IterationResult:
        # The stored path never asks a model, so its model-call count is known: zero.
        return IterationResult(
            iteration=plan.iteration,
            state=state,
            steps=tuple(results),
            outputs=outputs or {},
            duration_ms=self._elapsed_ms(started),
            reason_code=error.code if error else ("STOPPED" if stopped else None),
            reason=error.message if error else ("stopped on request" if stopped else None),
            failing_step=error.context.get("step") if error else None,
            model_calls=0,
            signals=self._monitor.take() if self._monitor is not None else (),
        )


async def _result_url(session: BrowserSession, step: BoundStep) -> str | None:
    """Where the verified submission left its tab; ``None`` if the tab is gone or unreadable."""
    try:
        return await session.read(Reading("url", step.tab), timeout_ms=step.timeout_ms)
    except NorthstarError:
        return None  # not knowing it only means a resume cannot continue from there


def _field_check(body: FieldValueCheck) -> Check:
    return Check(value=body)


def apply_regex(raw: str, pattern: str | None, name: str) -> str:
    """The first group (or the whole match) of ``pattern`` in ``raw``; no match fails."""
    if pattern is None:
        return raw
    match = re.search(pattern, raw)
    if match is None:
        raise ExpectationFailed(
            f"output {name!r}: the pattern {pattern!r} did not match the value read",
            fix="Check the output's regex against the page.",
        )
    value = match.group(1) if match.groups() else match.group(0)
    if value is None:
        raise ExpectationFailed(
            f"output {name!r}: the pattern {pattern!r} matched but its group took no part",
            fix="Make the output's regex group match, or drop the group.",
        )
    return value
