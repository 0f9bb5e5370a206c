"""A long run keeps counts and a bounded set of results; the journal keeps every one.

The bound is lowered to a handful so a short run on the fake browser crosses it; at or
under the bound every result is kept, as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from northstar.bench._fake_browser import FAKE_BASE_URL, _InstantHost
from northstar.bench._workload import recipe_request
from northstar.journal import Journal
from northstar.results import IterationResult, IterationState
from northstar.run.execution import execute_run
from northstar.run.repeat import RepeatSummary, VerifiedTally
from northstar.run.retained import RetainedResults


def result(number: int, state: str = "verified", calls: int | None = 1) -> IterationResult:
    return IterationResult(
        number, IterationState(state), outputs={"n": str(number)}, model_calls=calls
    )


def test_retained_results_keep_every_unverified_one_and_the_last_verified() -> None:
    kept = RetainedResults(keep=3)
    for number in (1, 2, 3, 4, 5, 7, 8):
        kept.add(result(number, "failed" if number == 2 else "verified"))
    assert [r.iteration for r in kept.in_order()] == [2, 5, 7, 8]
    assert kept.not_started(10) == (6, 9, 10)  # 1, 3 and 4 began though they were let go


def test_a_tally_counts_every_verified_iteration_and_keeps_the_last() -> None:
    tally = VerifiedTally(6, keep=2)
    for number in range(1, 6):
        tally.add(result(number))
    summary = tally.summary()
    assert (summary.verified_count, summary.all_verified, summary.model_calls) == (5, False, 5)
    assert [r.iteration for r in summary.verified] == [4, 5]
    assert summary.outputs == ((4, "n", "4"), (5, "n", "5"))
    tally.add(result(6, calls=None))
    assert (tally.summary().all_verified, tally.summary().model_calls) == (True, None)


def test_merged_lanes_add_their_counts() -> None:
    first, second = VerifiedTally(3, keep=1), VerifiedTally(2, keep=1)
    for number in (1, 3, 5):
        first.add(result(number))
    for number in (2, 4):
        second.add(result(number))
    merged = RepeatSummary.merge(5, [first.summary(), second.summary()])
    assert (merged.verified_count, merged.all_verified, merged.model_calls) == (5, True, 5)
    assert [r.iteration for r in merged.verified] == [4, 5]
    small = RepeatSummary.of(2, [result(1), result(2)])
    assert small.verified_count == 2  # a summary that holds them all counts them


async def test_a_run_past_the_bound_counts_all_keeps_few_and_journals_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in ("northstar.run.repeat", "northstar.run.retained"):
        monkeypatch.setattr(sys.modules[module], "KEEP_RESULTS", 5)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(
            recipe_request(FAKE_BASE_URL, 30), host=_InstantHost(), journal=journal
        )
        states = journal.iteration_states(outcome.run_id)
    assert (outcome.status, outcome.summary.verified_count) == ("verified", 30)
    assert [r.iteration for r in outcome.results] == [26, 27, 28, 29, 30]
    assert [r.iteration for r in outcome.summary.verified] == [26, 27, 28, 29, 30]
    assert outcome.not_started == ()
    assert outcome.summary.evidence_count == 30 * outcome.results[0].evidence_count
    assert len(states) == 30
    assert {state for state, _ in states.values()} == {IterationState.VERIFIED}


async def test_a_run_within_the_bound_keeps_every_result(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(
            recipe_request(FAKE_BASE_URL, 12), host=_InstantHost(), journal=journal
        )
    assert [r.iteration for r in outcome.results] == list(range(1, 13))
    assert [r.iteration for r in outcome.summary.verified] == list(range(1, 13))
    assert outcome.summary.verified_count == 12
