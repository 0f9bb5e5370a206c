"""The runner's recorder: every step committed, the in-flight record fsynced, secrets kept out."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import pytest

from northstar.browser import Reading, SendTrace
from northstar.errors import (
    ExpectationFailed,
    IdempotencyConflict,
    JournalError,
    OutcomeUnknown,
)
from northstar.journal import Journal, StepEvent, SubmissionState
from northstar.journal.paths import JournalTarget
from northstar.monitor.observation import Observation
from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, Target
from northstar.results import Evidence, IterationState, StepResult, StepStatus
from northstar.run.recorder import JournalRecorder
from northstar.run.runner import IterationRecorder, ProgramRunner

from .helpers import SECRET, create_run, make_plan


@dataclass
class FakeSession:
    """Echoes what it is asked, like a page would; fails where told to."""

    fail_check_of: str | None = None
    tabs: set[str] = field(default_factory=set)

    def has_tab(self, role: str) -> bool:
        return role in self.tabs

    async def open_tab(self, tab: BoundTab, *, timeout_ms: int) -> Evidence:
        self.tabs.add(tab.role)
        return Evidence("url", tab.role, tab.start or "", True, tab.start or "")

    async def perform(
        self, step: BoundStep, *, before_dispatch: Callable[[], None] = lambda: None
    ) -> tuple[Evidence, ...]:
        before_dispatch()
        typed = step.step.fill.value if step.step.fill else ""
        return (Evidence("action", step.tab, step.kind, True, str(typed)),)

    async def send_trace(self, tab: str) -> SendTrace:
        return SendTrace(changing_requests=1, navigated=True)  # the submission left the page

    async def check(self, check: Check, *, tab: str, timeout_ms: int) -> Evidence:
        if check.text is not None and check.text.contains == self.fail_check_of:
            raise ExpectationFailed("the text did not appear", tab=tab)
        return Evidence("text", tab, "Published", True, "Published")

    async def read(self, reading: Reading, *, timeout_ms: int) -> str:
        return "value"

    async def observe(self, tab: str) -> Observation:
        return Observation(tab=tab, url=f"fake://{tab}", snapshot_id="s1")

    async def submits_to(self, tab: str, target: Target, *, timeout_ms: int) -> str | None:
        return None

    async def screenshot(self, tab: str) -> bytes | None:
        return None

    def redacted(self, text: str) -> str:
        return text


@dataclass
class FakeHost:
    session_to_use: FakeSession

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    @asynccontextmanager
    async def session(self, plan: Plan) -> AsyncIterator[FakeSession]:
        yield self.session_to_use


def events(journal: Journal, step_id: str) -> list[str]:
    found = journal._db.conn.execute(
        "SELECT event FROM step_events WHERE step_id = ? ORDER BY id", (step_id,)
    ).fetchall()
    return [event for (event,) in found]


@pytest.fixture
def run_id(journal: Journal, plan: Plan) -> str:
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, plan.iteration, params_fingerprint=plan.params_fingerprint)
    return run_id


def test_the_recorder_is_an_iteration_recorder(journal: Journal, run_id: str) -> None:
    recorder: IterationRecorder = JournalRecorder(journal, run_id)
    assert recorder is not None


async def test_a_verified_iteration_through_the_real_runner(
    journal: Journal, run_id: str, plan: Plan
) -> None:
    runner = ProgramRunner(FakeHost(FakeSession()), recorder=JournalRecorder(journal, run_id))
    result = await runner.run_iteration(plan)
    journal.finish_iteration(run_id, result, secrets=plan.secrets)

    assert result.verified
    assert events(journal, "open-form") == ["started", "passed"]
    assert events(journal, "publish") == ["started", "in_flight", "dispatched", "passed"]
    assert events(journal, "done_when") == ["passed"]
    steps = journal._db.conn.execute("SELECT step_id, seq FROM steps ORDER BY seq").fetchall()
    assert steps == [("open-form", 0), ("fill-password", 1), ("publish", 2), ("done_when", 3)]
    submission = journal.submission(run_id, 1, "publish")
    assert submission is not None
    assert submission.state is SubmissionState.VERIFIED
    assert submission.input_fingerprint == plan.step("publish").input_fingerprint
    found = journal._db.conn.execute("SELECT evidence_json FROM step_events").fetchall()
    stored = ",".join(text for (text,) in found if text)
    assert SECRET not in stored  # the fake page echoed the typed password as evidence
    assert "[redacted]" in stored


async def test_a_failure_after_dispatch_leaves_the_submission_unknown(
    journal: Journal, run_id: str, plan: Plan
) -> None:
    host = FakeHost(FakeSession(fail_check_of="Published"))
    result = await ProgramRunner(host, recorder=JournalRecorder(journal, run_id)).run_iteration(
        plan
    )
    journal.finish_iteration(run_id, result, secrets=plan.secrets)

    assert result.state is IterationState.UNKNOWN
    assert events(journal, "publish") == ["started", "in_flight", "dispatched", "failed"]
    [(error,)] = journal._db.conn.execute(
        "SELECT error_json FROM step_events WHERE event = 'failed'"
    ).fetchall()
    assert '"code":"EXPECTATION_FAILED"' in str(error)
    submission = journal.submission(run_id, 1, "publish")
    assert submission is not None
    assert submission.state is SubmissionState.UNKNOWN


def test_the_in_flight_record_is_committed_with_synchronous_full(
    journal: Journal, run_id: str, plan: Plan
) -> None:
    if journal._db.postgres:
        the_in_flight_record_is_committed_with_synchronous_commit_on(journal, run_id, plan)
        return
    statements: list[str] = []
    journal._db.conn.set_trace_callback(statements.append)
    JournalRecorder(journal, run_id).submit_in_flight(plan, plan.step("publish"))
    journal._db.conn.set_trace_callback(None)

    sync_full = statements.index("PRAGMA synchronous = FULL")
    commit = statements.index("COMMIT")
    sync_normal = statements.index("PRAGMA synchronous = NORMAL")
    insert = next(i for i, s in enumerate(statements) if s.startswith("INSERT INTO submissions"))
    assert sync_full < insert < commit < sync_normal
    assert journal._db.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # back to NORMAL


def the_in_flight_record_is_committed_with_synchronous_commit_on(
    journal: Journal, run_id: str, plan: Plan
) -> None:
    """Postgres: ``SET LOCAL synchronous_commit = on`` inside the in-flight transaction only."""
    conn = journal._db.conn
    statements: list[str] = []
    execute = conn.execute

    def traced(sql: str, parameters: Any = ()) -> Any:
        statements.append(sql)
        return execute(sql, parameters)

    conn.execute = traced  # type: ignore[method-assign]
    JournalRecorder(journal, run_id).submit_in_flight(plan, plan.step("publish"))
    del conn.execute
    sync_on = statements.index("SET LOCAL synchronous_commit = on")
    insert = next(i for i, s in enumerate(statements) if s.startswith("INSERT INTO submissions"))
    assert statements.index("BEGIN") < sync_on < insert < statements.index("COMMIT")
    assert conn.execute("SHOW synchronous_commit").fetchone()[0] == "off"  # the other commits


def test_every_step_record_is_committed_when_the_call_returns(
    journal: Journal, run_id: str, plan: Plan
) -> None:
    recorder = JournalRecorder(journal, run_id)
    recorder.step_started(plan, plan.steps[0])
    assert not journal._db.conn.in_transaction
    recorder.step_finished(plan, StepResult("open-form", "admin", "goto", StepStatus.PASSED))
    assert not journal._db.conn.in_transaction


def test_a_recorded_submission_is_never_dispatched_again(
    journal: Journal, run_id: str, plan: Plan
) -> None:
    recorder = JournalRecorder(journal, run_id)
    publish = plan.step("publish")
    recorder.submit_in_flight(plan, publish)
    with pytest.raises(OutcomeUnknown, match="already recorded as in_flight"):
        recorder.submit_in_flight(plan, publish)
    other_inputs = make_plan(title="Other")
    with pytest.raises(IdempotencyConflict) as caught:
        recorder.submit_in_flight(other_inputs, other_inputs.step("publish"))
    assert caught.value.context == {"run_id": run_id, "iteration": 1, "step": "publish"}
    assert events(journal, "publish") == ["in_flight"]  # the refusals wrote nothing


def test_dispatch_needs_an_in_flight_record(journal: Journal, run_id: str, plan: Plan) -> None:
    with pytest.raises(JournalError, match="not in flight"):
        JournalRecorder(journal, run_id).submit_dispatched(plan, plan.step("publish"))


def test_a_reconciled_submission_state_can_be_recorded(
    journal: Journal, run_id: str, plan: Plan
) -> None:
    JournalRecorder(journal, run_id).submit_in_flight(plan, plan.step("publish"))
    journal.set_submission_state(run_id, 1, "publish", SubmissionState.FAILED)
    submission = journal.submission(run_id, 1, "publish")
    assert submission is not None
    assert submission.state is SubmissionState.FAILED
    assert journal.submission(run_id, 1, "open-form") is None
    with pytest.raises(JournalError, match="no submission"):
        journal.set_submission_state(run_id, 1, "open-form", SubmissionState.FAILED)


def test_secret_values_are_scrubbed_from_evidence_and_errors(
    journal: Journal, run_id: str, plan: Plan, journal_target: JournalTarget
) -> None:
    leaked = StepResult(
        "fill-password",
        "admin",
        "fill",
        StepStatus.FAILED,
        evidence=(Evidence("value", "admin", SECRET, False, f"got {SECRET}!"),),
        error={"code": "ACTION_FAILED", "message": f"cannot type {SECRET}", "nested": [SECRET]},
    )
    JournalRecorder(journal, run_id).step_finished(plan, leaked)
    [(evidence, error)] = journal._db.conn.execute(
        "SELECT evidence_json, error_json FROM step_events"
    ).fetchall()
    assert SECRET not in str(evidence) + str(error)
    assert "[redacted]" in str(evidence)
    assert "cannot type [redacted]" in str(error)
    journal.close()
    if isinstance(journal_target, Path):
        assert SECRET.encode() not in journal_target.read_bytes()


def test_a_step_cannot_be_reported_finished_while_running(
    journal: Journal, run_id: str, plan: Plan
) -> None:
    running = StepResult("open-form", "admin", "goto", StepStatus.RUNNING)
    with pytest.raises(
        JournalError, match="step 'open-form': reported as finished while still 'running'"
    ):
        JournalRecorder(journal, run_id).step_finished(plan, running)


def test_step_events_name_every_transition() -> None:
    assert [e.value for e in StepEvent] == [
        "started",
        "in_flight",
        "dispatched",
        "passed",
        "failed",
        "skipped",
    ]


def test_a_verified_key_returns_the_recorded_result_and_dispatches_nothing(
    journal: Journal, run_id: str, plan: Plan
) -> None:
    recorder = JournalRecorder(journal, run_id)
    publish = plan.step("publish")
    assert recorder.submit_in_flight(plan, publish) is True
    journal.set_submission_state(run_id, 1, "publish", SubmissionState.VERIFIED)
    assert recorder.submit_in_flight(plan, publish) is False
    assert events(journal, "publish") == ["in_flight"]  # the second call wrote nothing
    other_inputs = make_plan(title="Other")
    with pytest.raises(IdempotencyConflict):
        recorder.submit_in_flight(other_inputs, other_inputs.step("publish"))


def test_a_key_proven_absent_may_be_dispatched_again_under_the_same_key(
    journal: Journal, run_id: str, plan: Plan
) -> None:
    recorder = JournalRecorder(journal, run_id)
    publish = plan.step("publish")
    recorder.submit_in_flight(plan, publish)
    journal.set_submission_state(run_id, 1, "publish", SubmissionState.FAILED)
    assert recorder.submit_in_flight(plan, publish) is True
    submission = journal.submission(run_id, 1, "publish")
    assert submission is not None
    assert submission.state is SubmissionState.IN_FLIGHT
    assert submission.idempotency_key == f"{run_id}/1/publish"
