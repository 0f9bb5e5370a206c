"""``ProgramSession``: the agent path's session, keeping each step's result for the verdict.

The agent session journals every step itself; a program's iteration result must also
carry them (the run summary counts steps and evidence from verified iterations), so the
recorder it writes through is wrapped to keep a copy of each finished step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from northstar.agent._session import AgentSession
from northstar.journal.recorder import JournalRecorder
from northstar.plan.model import Plan
from northstar.results import StepResult

__all__ = ["ProgramSession"]


class _KeepingRecorder:
    """A ``JournalRecorder`` that also keeps each finished step (everything else passes on)."""

    def __init__(self, inner: JournalRecorder, kept: list[StepResult]) -> None:
        self._inner, self._kept = inner, kept

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def step_finished(self, plan: Plan, result: StepResult) -> None:
        self._inner.step_finished(plan, result)
        self._kept.append(result)


@dataclass(eq=False)
class ProgramSession(AgentSession):
    """An agent session whose finished steps are also kept in ``finished``."""

    finished: list[StepResult] = field(default_factory=list)

    @property
    def recorder(self) -> JournalRecorder:
        return cast(JournalRecorder, _KeepingRecorder(super().recorder, self.finished))
