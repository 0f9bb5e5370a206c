"""``JournalRecorder``: the runner's ``IterationRecorder``, written to the journal.

Each call commits before it returns, so whatever the runner reported survives a crash of
the worker the moment after. The in-flight record of a submission is also fsynced
(``synchronous=FULL``): it is the one promise made before the browser acts, and a
re-dispatch after a power loss must find it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from northstar.journal import _diagnoses, _steps
from northstar.journal._db import JournalDb
from northstar.journal.schema import StepEvent
from northstar.plan.model import BoundStep, Plan
from northstar.results import StepResult

__all__ = ["JournalRecorder"]


class JournalRecorder:
    """Records one run's steps; the iteration number comes from ``plan.iteration``."""

    def __init__(self, db: JournalDb, run_id: str) -> None:
        self._db = db
        self.run_id = run_id
        self._baselined: set[str] = set()  # steps whose baseline this run already has

    def step_started(self, plan: Plan, step: BoundStep) -> None:
        with self._db.transaction("record a step start", **self._where(plan, step.id)):
            self._ensure_step(plan, step)
            _steps.add_event(self._db, self.run_id, plan.iteration, step.id, StepEvent.STARTED)

    def submit_in_flight(self, plan: Plan, step: BoundStep) -> bool:
        """Durable before it returns; ``False`` if the key is already verified.

        Raises (dispatching nothing) for a key whose outcome is unknown or whose inputs
        differ; see ``_steps.open_submission``.
        """
        with (
            self._db.durable(),
            self._db.transaction("record a submission in flight", **self._where(plan, step.id)),
        ):
            self._ensure_step(plan, step)
            dispatch = _steps.open_submission(
                self._db, self.run_id, plan.iteration, step.id, step.input_fingerprint
            )
            if dispatch:
                _steps.add_event(
                    self._db, self.run_id, plan.iteration, step.id, StepEvent.IN_FLIGHT
                )
            return dispatch

    def submit_dispatched(self, plan: Plan, step: BoundStep) -> None:
        with self._db.transaction("record a submission dispatched", **self._where(plan, step.id)):
            _steps.dispatch_submission(self._db, self.run_id, plan.iteration, step.id)
            _steps.add_event(self._db, self.run_id, plan.iteration, step.id, StepEvent.DISPATCHED)

    def step_finished(self, plan: Plan, result: StepResult) -> None:
        with self._db.transaction("record a step result", **self._where(plan, result.step_id)):
            _steps.finish_step(self._db, self.run_id, plan.iteration, result, plan.secrets)

    # When a recipe breaks (northstar.run.diagnosis): baselines and diagnoses.

    def baseline_wanted(self, plan: Plan, step: BoundStep) -> bool:
        """Whether this run still lacks a baseline of ``step`` (one per recipe step per run)."""
        if step.id not in self._baselined and _diagnoses.has_baseline(
            self._db, self.run_id, step.id
        ):
            self._baselined.add(step.id)
        return step.id not in self._baselined

    def record_baseline(self, plan: Plan, step: BoundStep, observation: Mapping[str, Any]) -> None:
        where = (plan.iteration, step.id, step.tab)
        _diagnoses.insert_baseline(self._db, self.run_id, where, observation, plan.secrets)
        self._baselined.add(step.id)

    def last_baseline(self, plan: Plan, step_id: str) -> dict[str, Any] | None:
        """The newest baseline of ``step_id`` from a run of the same recipe file."""
        return _diagnoses.latest_baseline(self._db, self.run_id, step_id)

    def record_diagnosis(self, plan: Plan, diagnosis: Mapping[str, Any]) -> None:
        _diagnoses.insert_diagnosis(self._db, self.run_id, plan.iteration, diagnosis, plan.secrets)

    def _where(self, plan: Plan, step_id: str) -> dict[str, Any]:
        return {"run_id": self.run_id, "iteration": plan.iteration, "step": step_id}

    def _ensure_step(self, plan: Plan, step: BoundStep) -> None:
        _steps.ensure_step(
            self._db,
            self.run_id,
            plan.iteration,
            step.id,
            tab=step.tab,
            kind=step.kind,
            seq=step.index,
            retry_json=json.dumps(step.retry.model_dump()),
        )
