"""What a reader hands back: frozen views of one run, its iterations, steps and events.

They are plain data, so the queries that fill them, the text that renders them and the
report page that draws them share one shape and none depends on another.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from northstar.results import queued_run_busy

__all__ = ["IterationView", "ProbeControlView", "RunDetail", "RunEvent", "RunSummary", "StepView"]


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One line of ``northstar runs``; ``effective_status`` may be ``interrupted``."""

    run_id: str
    recipe_name: str
    recipe_path: str
    project: str
    profile: str
    status: str
    effective_status: str
    total_iterations: int
    iterations_recorded: int
    iterations_verified: int
    started_at: str
    ended_at: str | None
    heartbeat_at: str | None
    worker_pid: int | None
    worker_host: str | None
    queue: str | None = None  # a distributed run's queue: its liveness is the journal's

    @property
    def is_final(self) -> bool:
        """Nothing more will happen to the run without someone starting it again."""
        return self.effective_status != "running"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class StepView:
    """A step of one iteration: its last transition, timings, evidence and error."""

    step_id: str
    tab: str
    kind: str
    seq: int
    status: str
    effective_status: str
    started_at: str | None
    ended_at: str | None
    duration_ms: float | None
    evidence: tuple[dict[str, Any], ...]
    error: dict[str, Any] | None
    events: tuple[tuple[str, str], ...]  # (event, at), oldest first
    attempts: int | None = None
    retry: dict[str, Any] | None = None  # the policy the step ran under


@dataclass(frozen=True, slots=True)
class IterationView:
    number: int
    state: str
    effective_state: str
    lane: int | None
    params_fingerprint: str
    started_at: str | None
    ended_at: str | None
    duration_ms: float | None
    reason_code: str | None
    reason: str | None
    failing_step: str | None
    evidence_count: int
    model_calls: int | None
    steps: tuple[StepView, ...]
    outputs: dict[str, str] = field(default_factory=dict)
    # The values it ran with, each secret ``[redacted]``; ``None`` when the journal has none.
    row: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class RunEvent:
    at: str
    name: str
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ProbeControlView:
    """The latest positive control of a submit step's reconcile probe for this run's recipe
    definition and base URL: whether the probe found a submission known to be verified."""

    step_id: str
    proven: bool
    checked_at: str
    detail: str


@dataclass(frozen=True, slots=True)
class RunDetail:
    """Everything the journal holds about one run, for ``northstar show`` and ``watch``."""

    summary: RunSummary
    definition_hash: str
    params_fingerprint: str
    options: dict[str, Any]
    iterations: tuple[IterationView, ...]
    events: tuple[RunEvent, ...]
    # A bounded read (``northstar.readers.bounded``) leaves out verified iterations beyond
    # its window: how many it left out, and how many events before the last ones it kept.
    omitted_iterations: int = 0
    omitted_events: int = 0
    probe_controls: tuple[ProbeControlView, ...] = ()

    @property
    def run_id(self) -> str:
        return self.summary.run_id

    @property
    def effective_status(self) -> str:
        return self.summary.effective_status

    @property
    def is_final(self) -> bool:
        """Nothing more will happen to the run, and ``reconcile`` or ``resume`` may take it.

        A queued run is blocked as soon as one iteration is unknown, while workers may still
        finish others they hold: it is final once none is pending or running (or a survivor
        took them over), not before, so ``watch`` does not end while ``reconcile`` would
        still refuse the run.
        """
        if not self.summary.is_final:
            return False
        if self.summary.queue is None:
            return True
        states = [iteration.state for iteration in self.iterations]
        return not queued_run_busy(self.summary.status, self.summary.total_iterations, states)

    def to_dict(self) -> dict[str, Any]:
        out = self.summary.to_dict()
        out.update(
            definition_hash=self.definition_hash,
            params_fingerprint=self.params_fingerprint,
            options=self.options,
            iterations=[asdict(i) for i in self.iterations],
            events=[asdict(e) for e in self.events],
            omitted_iterations=self.omitted_iterations,
            omitted_events=self.omitted_events,
        )
        return out
