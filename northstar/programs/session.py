"""``ProgramSession``: a program iteration's session, the agent path's core composed in.

A program's calls are carried out by ``northstar.agent.session.SessionCore``, the same code
that acts for an agent: tab roles and origins enforced by the adapter, every action through
the host's one dispatch routine, a submission in flight durably before it is sent and its
``expect=`` checks part of its step (a check that fails leaves the submission ``unknown``,
never verified). A program's iteration result must also carry its steps (the run summary
counts steps and evidence from verified iterations), so the core journals through a
recorder that keeps a copy of each finished step.
"""

from __future__ import annotations

from northstar.agent.session import SessionCore
from northstar.agent.settings import AgentSettings
from northstar.browser import BrowserSession
from northstar.journal import Journal
from northstar.plan.model import BoundStep, Plan
from northstar.results import StepResult
from northstar.run.dispatch import IterationRecorder
from northstar.run.failpoints import Failpoint, no_failpoint
from northstar.run.recorder import JournalRecorder

__all__ = ["ProgramSession"]


class _KeepingRecorder:
    """A recorder that passes every report on and keeps each finished step."""

    def __init__(self, inner: IterationRecorder, kept: list[StepResult]) -> None:
        self._inner, self._kept = inner, kept

    def step_started(self, plan: Plan, step: BoundStep) -> None:
        self._inner.step_started(plan, step)

    def submit_in_flight(self, plan: Plan, step: BoundStep) -> bool:
        return self._inner.submit_in_flight(plan, step)

    def submit_dispatched(self, plan: Plan, step: BoundStep) -> None:
        self._inner.submit_dispatched(plan, step)

    def step_finished(self, plan: Plan, result: StepResult) -> None:
        self._inner.step_finished(plan, result)
        self._kept.append(result)


class ProgramSession:
    """The shared session core of one iteration, with its finished steps in ``finished``."""

    def __init__(
        self,
        run_id: str,
        plan: Plan,
        browser: BrowserSession,
        journal: Journal,
        settings: AgentSettings,
        *,
        secret: bytes,
        failpoint: Failpoint = no_failpoint,
    ) -> None:
        self.finished: list[StepResult] = []
        recorder = _KeepingRecorder(JournalRecorder(journal, run_id), self.finished)
        self.core = SessionCore(
            run_id, plan, browser, journal, settings,
            recorder=recorder, secret=secret, failpoint=failpoint,
        )  # fmt: skip

    @property
    def unverified(self) -> dict[str, str]:
        """Why a submission sent but not verified has no result, by its step id."""
        return self.core.unverified
