"""The writer: runs, credentials, iterations, outputs, events and what is never stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from northstar.errors import CredentialsInvalid, JournalError, OutputSaveFailed, RunNotFound
from northstar.journal import Journal, RunStatus
from northstar.journal.paths import JournalTarget
from northstar.recipe.model import Param
from northstar.recipe.params import params_fingerprint
from northstar.results import Evidence, IterationResult, IterationState, StepResult, StepStatus

from .helpers import SECRET, create_run


def rows(journal: Journal, sql: str, *params: object) -> list[tuple[object, ...]]:
    return journal._db.conn.execute(sql, params).fetchall()


def test_a_run_is_created_running_with_a_short_id(journal: Journal) -> None:
    run_id, credential = create_run(journal)
    assert run_id.startswith("r-")
    assert len(run_id) == 14
    assert int(run_id[2:], 16) >= 0
    assert len(credential) >= 40
    [(status, total, options, started, heartbeat)] = rows(
        journal,
        "SELECT status, total_iterations, options_json, started_at, heartbeat_at FROM runs",
    )
    assert (status, total, json.loads(str(options))) == ("running", 2, {"interval": 0})
    assert started == heartbeat == "2025-01-02T03:04:05.001000+00:00"


def test_the_right_credential_is_accepted(journal: Journal) -> None:
    run_id, credential = create_run(journal)
    journal.check_credential(run_id, credential)


@pytest.mark.parametrize("presented", [None, "", "wrong", "x" * 43])
def test_a_wrong_or_missing_credential_is_refused(journal: Journal, presented: str | None) -> None:
    run_id, _ = create_run(journal)
    with pytest.raises(CredentialsInvalid) as caught:
        journal.check_credential(run_id, presented)
    assert caught.value.code == "CREDENTIALS_INVALID"
    assert caught.value.context["run_id"] == run_id


def test_one_runs_credential_does_not_open_another(journal: Journal) -> None:
    first, credential = create_run(journal)
    second, _ = create_run(journal)
    journal.check_credential(first, credential)
    with pytest.raises(CredentialsInvalid):
        journal.check_credential(second, credential)


def test_checking_an_unknown_run_is_run_not_found(journal: Journal) -> None:
    with pytest.raises(RunNotFound):
        journal.check_credential("r-000000000000", "whatever")


def test_the_credential_never_reaches_the_file(journal_path: Path) -> None:
    with Journal.open(journal_path) as journal:
        run_id, credential = create_run(journal)
        journal.event(run_id, "started", iterations=2)
        on_disk = b"".join(p.read_bytes() for p in journal_path.parent.iterdir())
        assert credential.encode() not in on_disk
    assert credential.encode() not in journal_path.read_bytes()  # after the checkpoint too


def test_the_params_fingerprint_is_stored_as_the_caller_gives_it(journal: Journal) -> None:
    """Callers hash secret values first (``params_fingerprint``); the journal stores as given."""
    fingerprint = params_fingerprint({"password": Param(secret=True)}, {"password": SECRET})
    run_id, _ = create_run(journal, fingerprint=fingerprint)
    journal.start_iteration(run_id, 1, params_fingerprint=fingerprint)
    assert rows(journal, "SELECT params_fingerprint FROM runs") == [(fingerprint,)]
    assert rows(journal, "SELECT params_fingerprint FROM iterations") == [(fingerprint,)]
    assert SECRET not in fingerprint


def test_an_iteration_runs_and_finishes_with_its_verdict(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, 1, params_fingerprint="p1", lane=0)
    assert rows(journal, "SELECT state, lane FROM iterations") == [("running", 0)]
    evidence = (Evidence("text", "admin", "Saved", True, "Saved"),) * 3
    step = StepResult("save", "admin", "click", StepStatus.PASSED, 5.0, evidence)
    result = IterationResult(1, IterationState.VERIFIED, (step,), duration_ms=12.5, model_calls=2)
    journal.finish_iteration(run_id, result)
    assert rows(
        journal,
        "SELECT state, duration_ms, evidence_count, model_calls, reason_code, ended_at IS NOT NULL "
        "FROM iterations",
    ) == [("verified", 12.5, 3, 2, None, 1)]


def test_a_missing_model_call_count_stays_unknown(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, 1, params_fingerprint="p1")
    journal.finish_iteration(run_id, IterationResult(1, IterationState.VERIFIED))
    assert rows(journal, "SELECT model_calls FROM iterations") == [(None,)]


def test_a_failed_iteration_keeps_its_reason(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, 1, params_fingerprint="p1")
    failed = IterationResult(
        1,
        IterationState.FAILED,
        reason_code="TARGET_MISSING",
        reason="no button named Save",
        failing_step="save",
    )
    journal.finish_iteration(run_id, failed)
    assert rows(journal, "SELECT state, reason_code, reason, failing_step FROM iterations") == [
        ("failed", "TARGET_MISSING", "no button named Save", "save")
    ]


def test_steps_only_in_the_result_are_filled_in_once(journal: Journal) -> None:
    """``done_when`` reaches the journal through the result, scrubbed of secrets."""
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, 1, params_fingerprint="p1")
    done = StepResult(
        "done_when",
        "",
        "done_when",
        StepStatus.PASSED,
        1.0,
        (Evidence("value", "admin", SECRET, True, SECRET),),
    )
    result = IterationResult(1, IterationState.VERIFIED, (done,))
    journal.finish_iteration(run_id, result, secrets={SECRET})
    [(event, evidence)] = rows(journal, "SELECT event, evidence_json FROM step_events")
    assert event == "passed"
    assert SECRET not in str(evidence)
    assert rows(journal, "SELECT step_id, seq FROM steps") == [("done_when", 0)]


def test_finishing_an_iteration_that_never_started_is_an_error(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    with pytest.raises(JournalError, match="never started"):
        journal.finish_iteration(run_id, IterationResult(3, IterationState.VERIFIED))


def test_an_iteration_cannot_finish_while_running(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, 1, params_fingerprint="p1")
    with pytest.raises(JournalError, match="cannot finish"):
        journal.finish_iteration(run_id, IterationResult(1, IterationState.RUNNING))


@pytest.mark.parametrize("state", ["verified", "unknown", "needs_review"])
def test_a_settled_iteration_cannot_be_started_again(journal: Journal, state: str) -> None:
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, 1, params_fingerprint="p1")
    journal.finish_iteration(run_id, IterationResult(1, IterationState(state)))
    with pytest.raises(JournalError, match=f"already ended as {state}"):
        journal.start_iteration(run_id, 1, params_fingerprint="p1")
    assert rows(journal, "SELECT state FROM iterations") == [(state,)]


@pytest.mark.parametrize("state", ["failed", "stopped"])
def test_a_failed_or_stopped_iteration_may_be_started_again(journal: Journal, state: str) -> None:
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, 1, params_fingerprint="p1")
    journal.finish_iteration(run_id, IterationResult(1, IterationState(state)))
    journal.start_iteration(run_id, 1, params_fingerprint="p1")
    assert rows(journal, "SELECT state FROM iterations") == [("running",)]


def test_starting_an_iteration_of_an_unknown_run_is_run_not_found(journal: Journal) -> None:
    with pytest.raises(RunNotFound):
        journal.start_iteration("r-000000000000", 1, params_fingerprint="p")


def test_outputs_are_saved_per_iteration(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    for number in (1, 2):
        journal.start_iteration(run_id, number, params_fingerprint="p")
        journal.save_outputs(run_id, number, {"url": f"/post/{number}", "title": "T"})
    journal.save_outputs(run_id, 2, {"url": "/post/2b"})
    assert rows(journal, "SELECT iteration, name, value FROM outputs ORDER BY 1, 2") == [
        (1, "title", "T"),
        (1, "url", "/post/1"),
        (2, "title", "T"),
        (2, "url", "/post/2b"),
    ]


def test_outputs_that_cannot_be_saved_are_output_save_failed(journal: Journal) -> None:
    run_id, _ = create_run(journal)  # iteration 1 was never started: the row cannot exist
    with pytest.raises(OutputSaveFailed) as caught:
        journal.save_outputs(run_id, 1, {"url": "/x"})
    assert caught.value.context == {"run_id": run_id, "iteration": 1}
    assert rows(journal, "SELECT count(*) FROM outputs") == [(0,)]


def test_an_iteration_can_be_marked_for_review(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, 1, params_fingerprint="p")
    journal.finish_iteration(run_id, IterationResult(1, IterationState.VERIFIED))
    journal.mark_iteration(
        run_id, 1, IterationState.NEEDS_REVIEW, reason_code="OUTPUT_SAVE_FAILED", reason="disk"
    )
    assert rows(journal, "SELECT state, reason_code, reason FROM iterations") == [
        ("needs_review", "OUTPUT_SAVE_FAILED", "disk")
    ]


def test_marking_a_missing_iteration_is_an_error(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    with pytest.raises(JournalError):
        journal.mark_iteration(run_id, 9, IterationState.STOPPED)


def test_a_run_finishes_with_a_known_status(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    journal.finish_run(run_id, RunStatus.BLOCKED)
    assert rows(journal, "SELECT status, ended_at IS NOT NULL FROM runs") == [("blocked", 1)]
    journal.finish_run(run_id, "running")  # resumed
    assert rows(journal, "SELECT status, ended_at FROM runs") == [("running", None)]
    with pytest.raises(JournalError, match="not a run status"):
        journal.finish_run(run_id, "done")
    with pytest.raises(RunNotFound):
        journal.finish_run("r-000000000000", "failed")


def test_events(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    journal.event(run_id, "iteration_waiting", seconds=5, path=Path("/x"))
    assert rows(journal, "SELECT name, payload_json FROM events") == [
        ("iteration_waiting", '{"path": "/x", "seconds": 5}')
    ]


def test_a_write_is_visible_to_another_connection_when_the_method_returns(
    journal: Journal, journal_target: JournalTarget
) -> None:
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, 1, params_fingerprint="p")
    with Journal.open(journal_target) as other:
        assert rows(other, "SELECT state FROM iterations") == [("running",)]


def test_one_iterations_state_is_read_by_its_key(journal: Journal) -> None:
    run_id, _ = create_run(journal)
    assert journal.iteration_state(run_id, 1) is None
    journal.start_iteration(run_id, 1, params_fingerprint="p1")
    assert journal.iteration_state(run_id, 1) is IterationState.RUNNING
    journal.finish_iteration(run_id, IterationResult(1, IterationState.VERIFIED))
    assert journal.iteration_state(run_id, 1) is IterationState.VERIFIED
    assert journal.iteration_state(run_id, 2) is None
