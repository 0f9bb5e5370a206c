"""``read_ending`` over a real journal, SQLite and Postgres: counts, gaps, the stop reason."""

from __future__ import annotations

from northstar.errors import DefinitionChanged
from northstar.journal import Journal
from northstar.journal.paths import JournalTarget
from northstar.readers.endings import read_ending
from northstar.results import IterationResult, IterationState
from tests.journal.helpers import create_run


def finish(journal: Journal, run_id: str, number: int, result: IterationResult) -> None:
    journal.start_iteration(run_id, number, params_fingerprint="p", lane=1 + number % 2)
    journal.finish_iteration(run_id, result)


def test_lanes_leave_gaps_and_the_first_not_started_are_found(
    journal: Journal, journal_target: JournalTarget
) -> None:
    run_id, _ = create_run(journal, total=14)
    for number in (1, 3, 4):  # two lanes: 2 never started, 3 failed, 1 and 4 verified
        state = IterationState.FAILED if number == 3 else IterationState.VERIFIED
        reason = "EXPECTATION_FAILED" if number == 3 else None
        result = IterationResult(number, state, reason_code=reason, model_calls=0)
        finish(journal, run_id, number, result)
    journal.finish_run(run_id, "failed")
    ending = read_ending(journal_target, run_id)
    assert (ending.total, ending.recorded, ending.verified, ending.not_started) == (14, 3, 2, 11)
    assert ending.first_not_started == (2, 5, 6, 7, 8, 9, 10, 11, 12, 13)
    assert dict(ending.states) == {"failed": 1, "verified": 2}
    assert ending.model_calls == 0  # every verified iteration reported 0 calls
    assert (ending.code, ending.exit_code) == ("EXPECTATION_FAILED", 1)


def test_a_binding_stop_is_the_reason_until_a_resume_comes_after_it(
    journal: Journal, journal_target: JournalTarget
) -> None:
    run_id, _ = create_run(journal, total=3)
    finish(journal, run_id, 1, IterationResult(1, IterationState.VERIFIED))  # calls unknown
    stop = DefinitionChanged("the recipe x.yaml changed", iteration=2, path="/r/x.yaml")
    journal.record_stop(run_id, stop.with_context(run_id=run_id))
    journal.finish_run(run_id, "failed")
    ending = read_ending(journal_target, run_id)
    assert ending.ending is not None
    assert (ending.ending.name, ending.exit_code, ending.model_calls) == (
        "binding_changed", 5, None
    )  # fmt: skip
    assert ending.reason is not None
    assert (ending.reason.iteration, ending.reason.path) == (2, "/r/x.yaml")
    assert ending.first_not_started == (2, 3)
    journal.event(run_id, "run_resumed", first=2, remaining=2)
    journal.finish_run(run_id, "stopped")
    resumed = read_ending(journal_target, run_id)
    assert (resumed.code, resumed.exit_code) == (None, 130)
