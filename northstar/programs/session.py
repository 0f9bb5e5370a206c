"""``ProgramSession``: the agent path's session, keeping each step's result for the verdict.

The agent session journals every step itself; a program's iteration result must also
carry them (the run summary counts steps and evidence from verified iterations), so the
recorder it writes through is wrapped to keep a copy of each finished step.

A submission's ``expect=`` checks are part of its step, as in a recipe's submit step:
they run after the action is recorded dispatched and before the step is finished, so a
check that fails fails the step, and the journal leaves the submission ``unknown`` (it
may have happened) instead of verified; the program gets ``OUTCOME_UNKNOWN``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from northstar.agent._session import AgentSession
from northstar.agent.actions import ActRequest
from northstar.errors import ExpectationFailed
from northstar.journal.recorder import JournalRecorder
from northstar.plan.model import BoundStep, Plan
from northstar.recipe.model import Check
from northstar.results import Evidence, StepResult

__all__ = ["ProgramSession"]


class _KeepingRecorder:
    """A ``JournalRecorder`` that also keeps each finished step (everything else passes on)."""

    def __init__(self, inner: JournalRecorder, kept: list[StepResult], sent: set[str]) -> None:
        self._inner, self._kept, self._sent = inner, kept, sent

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def submit_dispatched(self, plan: Plan, step: BoundStep) -> None:
        if step.id not in self._sent:  # already recorded before its expectations ran
            self._sent.add(step.id)
            self._inner.submit_dispatched(plan, step)

    def step_finished(self, plan: Plan, result: StepResult) -> None:
        self._inner.step_finished(plan, result)
        self._kept.append(result)


@dataclass(eq=False)
class ProgramSession(AgentSession):
    """An agent session whose finished steps are also kept in ``finished``."""

    finished: list[StepResult] = field(default_factory=list)
    # A submission's expect= checks, by its step id, set by the call before it acts.
    expectations: dict[str, list[Check]] = field(default_factory=dict)
    # Why a submission has no result, by its step id (for the iteration's reason).
    unverified: dict[str, str] = field(default_factory=dict)
    _sent: set[str] = field(default_factory=set)

    @property
    def recorder(self) -> JournalRecorder:
        kept = _KeepingRecorder(super().recorder, self.finished, self._sent)
        return cast(JournalRecorder, kept)

    async def _perform(
        self, request: ActRequest, step: BoundStep, before: Any
    ) -> tuple[Evidence, ...]:
        evidence = await super()._perform(request, step, before)
        expect = self.expectations.pop(step.id, []) if step.is_submit else []
        if not expect:
            return evidence
        self.recorder.submit_dispatched(self.plan, step)  # sent: a check failing now is unknown
        held = [await self._expectation(step, check) for check in expect]
        return (*evidence, *held)

    async def _expectation(self, step: BoundStep, check: Check) -> Evidence:
        try:
            return await self.browser.check(
                check, tab=check.tab or step.tab, timeout_ms=step.timeout_ms
            )
        except ExpectationFailed:
            self.unverified[step.id] = f"expectation did not hold: {check.describe()}"
            raise
