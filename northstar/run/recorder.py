"""``JournalRecorder``: the runner's ``IterationRecorder``, written to the journal.

It turns a plan's steps into the plain values the journal keeps
(``northstar.journal.step_log``); what it reports is durable when each call returns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from northstar.journal import Journal
from northstar.journal.step_log import StepRow
from northstar.plan.model import BoundStep, Plan
from northstar.results import StepResult

__all__ = ["JournalRecorder"]


def step_row(step: BoundStep) -> StepRow:
    """The journal's row of a plan's step."""
    retry = json.dumps(step.retry.model_dump())
    return StepRow(step.id, step.tab, step.kind, seq=step.index, retry_json=retry)


class JournalRecorder:
    """Records one run's steps; the iteration number comes from ``plan.iteration``."""

    def __init__(self, journal: Journal, run_id: str) -> None:
        self.run_id = run_id
        self._log = journal.steps(run_id)

    def step_started(self, plan: Plan, step: BoundStep) -> None:
        self._log.started(plan.iteration, step_row(step))

    def submit_in_flight(self, plan: Plan, step: BoundStep) -> bool:
        """Durable before it returns; ``False`` if the key is already verified.

        Raises (dispatching nothing) for a key whose outcome is unknown or whose inputs
        differ; see ``northstar.journal.submissions``.
        """
        return self._log.in_flight(plan.iteration, step_row(step), step.input_fingerprint)

    def submit_dispatched(self, plan: Plan, step: BoundStep) -> None:
        self._log.dispatched(plan.iteration, step.id)

    def step_finished(self, plan: Plan, result: StepResult) -> None:
        self._log.finished(plan.iteration, result, plan.secrets)

    # When a recipe breaks (northstar.run.diagnosis): baselines and diagnoses.

    def baseline_wanted(self, plan: Plan, step: BoundStep) -> bool:
        """Whether this run still lacks a baseline of ``step`` (one per recipe step per run)."""
        return self._log.baseline_wanted(step.id)

    def record_baseline(self, plan: Plan, step: BoundStep, observation: Mapping[str, Any]) -> None:
        where = (plan.iteration, step.id, step.tab)
        self._log.record_baseline(where, observation, plan.secrets)

    def last_baseline(self, plan: Plan, step_id: str) -> dict[str, Any] | None:
        """The newest baseline of ``step_id`` from a run of the same recipe file."""
        return self._log.last_baseline(step_id)

    def record_diagnosis(self, plan: Plan, diagnosis: Mapping[str, Any]) -> None:
        self._log.record_diagnosis(plan.iteration, diagnosis, plan.secrets)
