"""``StepLog``: one run's step records, written from plain values.

The journal's side of a runner's recorder (``northstar.run.recorder.JournalRecorder``
turns a plan's steps into these values). Each call commits before it returns, so
whatever was reported survives a crash of the worker the moment after. The in-flight
record of a submission is also fsynced (``synchronous=FULL``): it is the one promise made
before the browser acts, and a re-dispatch after a power loss must find it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from northstar.journal import _diagnoses, _steps
from northstar.journal._db import JournalDb
from northstar.journal.schema import StepEvent
from northstar.results import StepResult

__all__ = ["StepLog", "StepRow"]


@dataclass(frozen=True, slots=True)
class StepRow:
    """A step as the journal keeps it: its id, tab role, kind, place and retry policy."""

    step_id: str
    tab: str
    kind: str
    seq: int | None = None
    retry_json: str | None = None


class StepLog:
    """Records one run's steps; every call names its iteration."""

    def __init__(self, db: JournalDb, run_id: str) -> None:
        self._db = db
        self.run_id = run_id
        self._baselined: set[str] = set()  # steps whose baseline this run already has

    def started(self, iteration: int, step: StepRow) -> None:
        with self._db.transaction("record a step start", **self._where(iteration, step.step_id)):
            self._ensure_step(iteration, step)
            _steps.add_event(self._db, self.run_id, iteration, step.step_id, StepEvent.STARTED)

    def in_flight(self, iteration: int, step: StepRow, input_fingerprint: str) -> bool:
        """Durable before it returns; ``False`` if the key is already verified.

        Raises (dispatching nothing) for a key whose outcome is unknown or whose inputs
        differ; see ``northstar.journal.submissions``.
        """
        where = self._where(iteration, step.step_id)
        with self._db.durable(), self._db.transaction("record a submission in flight", **where):
            self._ensure_step(iteration, step)
            dispatch = _steps.open_submission(
                self._db, self.run_id, iteration, step.step_id, input_fingerprint
            )
            if dispatch:
                _steps.add_event(
                    self._db, self.run_id, iteration, step.step_id, StepEvent.IN_FLIGHT
                )
            return dispatch

    def dispatched(self, iteration: int, step_id: str) -> None:
        where = self._where(iteration, step_id)
        with self._db.transaction("record a submission dispatched", **where):
            _steps.dispatch_submission(self._db, self.run_id, iteration, step_id)
            _steps.add_event(self._db, self.run_id, iteration, step_id, StepEvent.DISPATCHED)

    def finished(self, iteration: int, result: StepResult, secrets: Collection[str]) -> None:
        with self._db.transaction("record a step result", **self._where(iteration, result.step_id)):
            _steps.finish_step(self._db, self.run_id, iteration, result, secrets)

    # When a recipe breaks: baselines and diagnoses.

    def baseline_wanted(self, step_id: str) -> bool:
        """Whether this run still lacks a baseline of ``step_id`` (one per step per run)."""
        if step_id not in self._baselined and _diagnoses.has_baseline(
            self._db, self.run_id, step_id
        ):
            self._baselined.add(step_id)
        return step_id not in self._baselined

    def record_baseline(
        self,
        where: tuple[int, str, str],
        observation: Mapping[str, Any],
        secrets: Collection[str],
    ) -> None:
        """``where``: the iteration, the step and its tab role."""
        _diagnoses.insert_baseline(self._db, self.run_id, where, observation, secrets)
        self._baselined.add(where[1])

    def last_baseline(self, step_id: str) -> dict[str, Any] | None:
        """The newest baseline of ``step_id`` from a run of the same recipe file."""
        return _diagnoses.latest_baseline(self._db, self.run_id, step_id)

    def record_diagnosis(
        self, iteration: int, diagnosis: Mapping[str, Any], secrets: Collection[str]
    ) -> None:
        _diagnoses.insert_diagnosis(self._db, self.run_id, iteration, diagnosis, secrets)

    def _where(self, iteration: int, step_id: str) -> dict[str, Any]:
        return {"run_id": self.run_id, "iteration": iteration, "step": step_id}

    def _ensure_step(self, iteration: int, step: StepRow) -> None:
        _steps.ensure_step(
            self._db,
            self.run_id,
            iteration,
            step.step_id,
            tab=step.tab,
            kind=step.kind,
            seq=step.seq,
            retry_json=step.retry_json,
        )
