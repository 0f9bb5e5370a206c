"""What an iteration produced: step results, evidence, outputs and the verdict.

Plain frozen data, so the runner's decisions can be tested without a browser and results
can be written to the journal and to JSON unchanged.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "ACTED_ON",
    "Evidence",
    "IterationResult",
    "IterationState",
    "StepResult",
    "StepStatus",
    "queued_run_busy",
]


class StepStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class IterationState(StrEnum):
    """``pending -> running -> verified | failed | needs_review | unknown | stopped``."""

    PENDING = "pending"
    RUNNING = "running"
    VERIFIED = "verified"
    FAILED = "failed"
    NEEDS_REVIEW = "needs_review"
    UNKNOWN = "unknown"
    STOPPED = "stopped"

    @property
    def is_final(self) -> bool:
        return self not in (IterationState.PENDING, IterationState.RUNNING)


def queued_run_busy(status: str, total: int, states: Collection[str]) -> bool:
    """Whether a queued run's iterations may still be in some worker's hands.

    An iteration ``pending`` or ``running`` may be on a live worker on another machine (or
    wait for a survivor's takeover); a ``running`` run with iterations not yet recorded
    still has them on the queue. No pid is consulted: it is only the last claimer's.
    ``reconcile`` and ``resume`` refuse such a run, and ``watch`` follows it until it is not.
    """
    if any(state in (IterationState.PENDING, IterationState.RUNNING) for state in states):
        return True
    return status == "running" and len(states) < total


# The evidence kind of the element an action resolved to: ``expected`` is what the step
# looked for, ``found`` its role, name and tag (and where a submitted form goes).
ACTED_ON = "acted_on"


@dataclass(frozen=True, slots=True)
class Evidence:
    """One thing that was checked on a page, and what was found."""

    kind: str
    tab: str
    expected: str
    passed: bool
    found: str = ""


@dataclass(frozen=True, slots=True)
class StepResult:
    step_id: str
    tab: str
    kind: str
    status: StepStatus
    duration_ms: float = 0.0
    evidence: tuple[Evidence, ...] = ()
    error: Mapping[str, Any] | None = None
    attempts: int = 1
    # A submission's tab URL once its expectations held: where a resume continues after it.
    result_url: str | None = None


@dataclass(frozen=True, slots=True)
class IterationResult:
    """The verdict of one iteration; ``verified`` is true only in state ``verified``."""

    iteration: int
    state: IterationState
    steps: tuple[StepResult, ...] = ()
    outputs: Mapping[str, str] = field(default_factory=dict)
    duration_ms: float = 0.0
    reason_code: str | None = None
    reason: str | None = None
    failing_step: str | None = None
    # Model calls made for this iteration, as reported by whatever ran it: 0 on the stored
    # path (a recipe asks no model), the agent's or program's count when it reports one,
    # None when unknown (never guessed as 0).
    model_calls: int | None = None
    signals: tuple[Mapping[str, Any], ...] = ()  # advisory loop signals, never a verdict

    @property
    def verified(self) -> bool:
        return self.state is IterationState.VERIFIED

    @property
    def evidence_count(self) -> int:
        return sum(len(s.evidence) for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["verified"] = self.verified
        out["evidence_count"] = self.evidence_count
        return out
