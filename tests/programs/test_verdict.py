"""The four pieces of a program iteration's verification, decided without a browser."""

from __future__ import annotations

from dataclasses import replace

from northstar.programs.verdict import (
    NO_RESULT,
    TIMED_OUT,
    IterationEvidence,
    model_calls_line,
    model_calls_summary,
    program_verdict,
)
from northstar.results import IterationState


def test_all_four_pieces_verify() -> None:
    assert program_verdict(IterationEvidence(exit_code=0, completed=True)).state is (
        IterationState.VERIFIED
    )


def test_exit_zero_without_complete_is_not_verified_for_want_of_a_result() -> None:
    verdict = program_verdict(IterationEvidence(exit_code=0, completed=False))
    assert verdict.state is IterationState.FAILED
    assert verdict.reason_code == "PROGRAM_ITERATION_NOT_VERIFIED"
    assert NO_RESULT in (verdict.reason or "")


def test_each_missing_piece_is_named() -> None:
    verdict = program_verdict(
        IterationEvidence(
            exit_code=0,
            completed=True,
            missing_outputs=("post_url",),
            failed_checks=("visible heading",),
        )
    )
    assert verdict.state is IterationState.FAILED
    assert "outputs not given: post_url" in (verdict.reason or "")
    assert "done_when did not hold: visible heading" in (verdict.reason or "")
    unsaved = program_verdict(IterationEvidence(exit_code=0, completed=True, outputs_saved=False))
    assert unsaved.state is IterationState.NEEDS_REVIEW


def test_a_crash_fails_and_a_crash_with_a_submission_open_is_unknown() -> None:
    crashed = program_verdict(IterationEvidence(exit_code=1, completed=False))
    assert crashed.state is IterationState.FAILED
    killed = program_verdict(IterationEvidence(exit_code=None, completed=False, open_submissions=1))
    assert killed.state is IterationState.UNKNOWN
    assert killed.reason_code == "OUTCOME_UNKNOWN"
    assert "killed by a signal" in (killed.reason or "")
    open_after_exit = IterationEvidence(exit_code=0, completed=True, open_submissions=1)
    assert program_verdict(open_after_exit).state is IterationState.UNKNOWN


def test_model_calls_sum_the_known_counts_and_count_the_unknown() -> None:
    assert model_calls_summary([2, None, 3]) == (5, 1)
    assert model_calls_line([2, None, 3]) == (
        "model calls: 5 reported by 2 iteration(s), unknown for 1"
    )
    assert model_calls_summary([None, None]) == (0, 2)  # the sum of no known count, not a guess
    assert model_calls_line([0]) == "model calls: 0 reported by 1 iteration(s)"


def test_a_stop_request_stops_an_unfinished_iteration_unless_a_submission_is_open() -> None:
    stopped = program_verdict(IterationEvidence(exit_code=None, completed=False, stopped=True))
    assert stopped.state is IterationState.STOPPED
    finished = IterationEvidence(exit_code=0, completed=True, stopped=True)
    assert program_verdict(finished).state is IterationState.VERIFIED
    in_doubt = IterationEvidence(exit_code=None, completed=False, open_submissions=1, stopped=True)
    assert program_verdict(in_doubt).state is IterationState.UNKNOWN


def test_a_host_error_is_named_in_the_reason() -> None:
    verdict = program_verdict(
        IterationEvidence(exit_code=None, completed=False, error_code="NAVIGATION_FAILED")
    )
    assert verdict.state is IterationState.FAILED
    assert verdict.reason_code == "NAVIGATION_FAILED"
    assert "the host could not go on with the iteration (NAVIGATION_FAILED)" in (
        verdict.reason or ""
    )


def test_a_program_ended_at_its_time_limit_failed_or_is_unknown_with_a_submission_open() -> None:
    silent = IterationEvidence(exit_code=None, completed=False, time_limit_s=1.5)
    verdict = program_verdict(silent)
    assert (verdict.state, verdict.reason_code) == (IterationState.FAILED, TIMED_OUT)
    assert "made no call for 1.5 s and was ended" in (verdict.reason or "")
    # Ended by SIGTERM with status 0 (a handler that exits): still not a finished program.
    assert program_verdict(replace(silent, exit_code=0)).reason_code == TIMED_OUT
    open_one = replace(silent, open_submissions=1, open_steps=("submit.a (why)",))
    unknown = program_verdict(open_one)
    assert (unknown.state, unknown.reason_code) == (IterationState.UNKNOWN, "OUTCOME_UNKNOWN")
    assert "1 submission(s) without a result: submit.a (why)" in (unknown.reason or "")
