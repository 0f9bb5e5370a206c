"""The one way a step goes through the host, for every front end.

The recipe runner (and with it a distributed worker's lanes), an agent's ``act`` and
``check`` and a program's calls all run their steps through ``StepDispatch``, in this
order, which the journal must see and a crash must not break:

1. ``start()``: the step is journaled started.
2. ``act(perform, check)``, once per attempt of an action: for a submission the in-flight
   record is written durably BEFORE the browser acts (the recorder's ``submit_in_flight``,
   which may answer "already verified": then nothing is sent and the recorded result
   stands); the browser acts; the submission is journaled dispatched; then the step's
   expectations are checked (a submission's ``expect`` is part of its step, so one that
   fails leaves the submission unknown, never verified). The failpoints the kill trials
   use sit at ``before_in_flight``, ``after_in_flight`` and ``after_dispatch``.
3. ``passed(...)`` or ``failed(error)``: the step is journaled finished with its evidence
   and the monitor feed sees it; a failure once a submission may have been sent becomes
   ``OUTCOME_UNKNOWN``.

Retry is the caller's, around ``act``, and repeat is never retry: a submission is retried
only while ``dispatched`` is false, that is when it is certain it was not sent.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

import structlog

from northstar.browser.protocol import SendTrace
from northstar.errors import NorthstarError, OutcomeUnknown
from northstar.plan.model import BoundStep, Plan
from northstar.recipe.model import Check
from northstar.results import Evidence, StepResult, StepStatus
from northstar.run.failpoints import Failpoint, no_failpoint
from northstar.run.not_sent import not_sent

__all__ = [
    "NOT_RESENT",
    "ActionFeed",
    "IterationRecorder",
    "NullRecorder",
    "StepDispatch",
    "StepFailure",
    "acted_on",
    "recorded_evidence",
    "unexpected_after_dispatch",
]

log = structlog.get_logger("northstar.run.dispatch")

NOT_RESENT = "recorded result; not re-sent"

# The browser's half of an attempt: it calls the hook once the target is resolved,
# immediately before the action itself (``BrowserSession.perform`` and its by-reference
# twin take it as ``before_dispatch``).
Perform = Callable[[Callable[[], None]], Awaitable[tuple[Evidence, ...]]]
CheckStep = Callable[[Check], Awaitable[Evidence]]
# What left the page since the submit action (for NOT_SENT); None where it cannot be known.
TraceStep = Callable[[], Awaitable[SendTrace]]


class IterationRecorder(Protocol):
    """Where a step's progress is reported; the journal implements it durably."""

    def step_started(self, plan: Plan, step: BoundStep) -> None: ...

    def submit_in_flight(self, plan: Plan, step: BoundStep) -> bool:
        """Called right before a submitting action; durable when it returns.

        ``False`` means the submission's key is already verified: the recorded result
        stands and nothing is dispatched. A refusal (unknown outcome, other inputs) raises.
        """
        ...

    def submit_dispatched(self, plan: Plan, step: BoundStep) -> None: ...

    def step_finished(self, plan: Plan, result: StepResult) -> None: ...


class NullRecorder:
    """Records nothing (a single iteration run without a journal)."""

    def step_started(self, plan: Plan, step: BoundStep) -> None:
        return None

    def submit_in_flight(self, plan: Plan, step: BoundStep) -> bool:
        return True

    def submit_dispatched(self, plan: Plan, step: BoundStep) -> None:
        return None

    def step_finished(self, plan: Plan, result: StepResult) -> None:
        return None


class ActionFeed(Protocol):
    """The BehaviorMonitor's feed: told of every finished step, and whether it acted."""

    async def acted(self, step: BoundStep, *, executed: bool, passed: bool) -> None: ...


@dataclass(frozen=True, slots=True)
class StepFailure:
    """A failed step as journaled, and the error its iteration (or call) ends with.

    ``unknown``: a submission was (or may have been) sent, so ``error`` is an
    ``OUTCOME_UNKNOWN`` and the iteration's outcome is unknown, not failed.
    """

    result: StepResult
    error: NorthstarError
    unknown: bool


class _AlreadyVerified(Exception):
    """Internal: the submission's key is verified in the journal; do not dispatch."""


class StepDispatch:
    """One step of one iteration through the host (see the module docstring)."""

    def __init__(
        self,
        recorder: IterationRecorder,
        plan: Plan,
        step: BoundStep,
        *,
        failpoint: Failpoint = no_failpoint,
        feed: ActionFeed | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._recorder, self._plan, self.step = recorder, plan, step
        self._failpoint, self._feed, self._monotonic = failpoint, feed, monotonic
        self._started = monotonic()
        self.dispatched = False  # a submission was (or may have been) sent
        self.acted = False  # the browser was let act (the action may have happened)
        self.recorded = False  # a submission already verified: answered from the record
        self.failed_check: Check | None = None  # the expectation that did not hold, if one

    def start(self) -> None:
        self._recorder.step_started(self._plan, self.step)
        self._started = self._monotonic()

    async def act(
        self, perform: Perform, check: CheckStep, trace: TraceStep | None = None
    ) -> tuple[Evidence, ...]:
        """One attempt of the action, then its expectations; raises what they raise.

        A submission whose expectations failed, when ``trace`` shows nothing was sent, is
        ``NOT_SENT`` and no longer counts as dispatched (its record is failed, not unknown).
        """
        step, plan = self.step, self._plan
        self.failed_check = None
        try:
            evidence = await perform(self._before_dispatch)
        except _AlreadyVerified:
            self.recorded = True  # its expectations held when it was verified
            return (recorded_evidence(step),)
        if not step.is_submit:
            return (*evidence, *await self.expectations(check))
        self._recorder.submit_dispatched(plan, step)
        self._failpoint("after_dispatch", plan.iteration)
        try:
            return (*evidence, *await self.expectations(check))
        except NorthstarError as failure:
            refused = None if trace is None else not_sent(await trace(), step.id)
            if refused is None:
                raise
            self.dispatched = False
            raise refused.with_context(tab=step.tab) from failure

    async def expectations(self, check: CheckStep) -> tuple[Evidence, ...]:
        """The step's ``expect`` checks, in order (``act`` runs them after the action)."""
        held: list[Evidence] = []
        for expected in self.step.step.expect:
            self.failed_check = expected  # until it holds
            held.append(await check(expected))
        self.failed_check = None
        return tuple(held)

    def _before_dispatch(self) -> None:
        # Durable before the action: a crash after this line leaves an unknown outcome.
        step, plan = self.step, self._plan
        if step.is_submit:
            self._failpoint("before_in_flight", plan.iteration)
            if not self._recorder.submit_in_flight(plan, step):
                raise _AlreadyVerified
            self.dispatched = True
            self._failpoint("after_in_flight", plan.iteration)
        self.acted = True

    async def passed(
        self, evidence: Iterable[Evidence], *, attempts: int = 1, result_url: str | None = None
    ) -> StepResult:
        """Journal the step passed; the monitor feed sees it."""
        result = self._result(StepStatus.PASSED, evidence, attempts=attempts, url=result_url)
        self._recorder.step_finished(self._plan, result)
        if self._feed is not None:
            await self._feed.acted(self.step, executed=True, passed=True)
        return result

    async def failed(
        self,
        error: Exception,
        evidence: Iterable[Evidence] = (),
        *,
        attempts: int = 1,
        earlier_dispatch: bool = False,
    ) -> StepFailure:
        """Journal the step failed; the error to end with (``OUTCOME_UNKNOWN`` once sent).

        An exception no check foresaw is raised again as itself while nothing may have
        been sent (``earlier_dispatch``: a step before this one of the same iteration
        sent a submission); once something may have been, it becomes a coded error.
        """
        step = self.step
        if isinstance(error, NorthstarError):
            coded, unknown = error, self.dispatched
        elif self.dispatched or earlier_dispatch:
            coded, unknown = unexpected_after_dispatch(error, f"step {step.id!r}"), True
        else:
            raise error  # nothing was sent: a bug shows as itself
        coded.with_context(step=step.id, tab=step.tab, iteration=self._plan.iteration)
        result = self._result(StepStatus.FAILED, evidence, attempts=attempts, error=coded)
        self._recorder.step_finished(self._plan, result)
        if self._feed is not None:
            await self._feed.acted(step, executed=self.acted, passed=False)
        return StepFailure(result, _outcome(coded, step) if self.dispatched else coded, unknown)

    def skipped(self, evidence: Iterable[Evidence] = (), *, attempts: int = 1) -> StepResult:
        """Journal a step a stop cut short before it acted."""
        result = self._result(StepStatus.SKIPPED, evidence, attempts=attempts)
        self._recorder.step_finished(self._plan, result)
        return result

    def _result(
        self,
        status: StepStatus,
        evidence: Iterable[Evidence],
        *,
        attempts: int,
        error: NorthstarError | None = None,
        url: str | None = None,
    ) -> StepResult:
        step = self.step
        return StepResult(
            step_id=step.id,
            tab=step.tab,
            kind=step.kind,
            status=status,
            duration_ms=round((self._monotonic() - self._started) * 1000, 3),
            evidence=tuple(evidence),
            error=error.to_dict() if error is not None else None,
            attempts=attempts,
            result_url=url,
        )


def _outcome(error: NorthstarError, step: BoundStep) -> OutcomeUnknown:
    """A failure after a submission was dispatched leaves its outcome unknown."""
    if isinstance(error, OutcomeUnknown):
        return error
    return OutcomeUnknown(
        f"submission {step.id} was dispatched but its outcome could not be verified "
        f"({error.code}); it is not sent again under its key",
        step=step.id,
        tab=step.tab,
    )


def unexpected_after_dispatch(exc: Exception, where: str) -> OutcomeUnknown:
    """A coded error for an exception no check foresaw, once a submission may have been sent.

    Only the exception's class is named: its message may quote a rendered (secret) value.
    """
    log.error("unexpected_error", where=where, error=exc.__class__.__name__)
    return OutcomeUnknown(
        f"{where} stopped on an unexpected {exc.__class__.__name__} after a submission was "
        "dispatched, so its outcome is not verified",
        fix="Reconcile the run (`northstar reconcile RUN_ID`), then report the error.",
    )


def recorded_evidence(step: BoundStep) -> Evidence:
    """The evidence of a submission answered from its record: it was not sent again."""
    return Evidence("submission", step.tab, f"{step.id} submitted once", True, NOT_RESENT)


def acted_on(evidence: Iterable[Evidence]) -> str:
    """What the adapter read of the element an action was done on (its acted-on evidence)."""
    return next((item.found for item in evidence if item.kind == "acted_on"), "")
