"""The one rule for a repeated submission: every row of ``northstar.journal.submissions``."""

from __future__ import annotations

import pytest

from northstar.errors import IdempotencyConflict, OutcomeUnknown
from northstar.journal import SubmissionRecord, SubmissionState
from northstar.journal.submissions import (
    RecordedSubmission,
    SubmissionVerdict,
    submission_verdict,
)


def record(state: SubmissionState, fingerprint: str = "f1") -> SubmissionRecord:
    return SubmissionRecord("r/1/s", "r", 1, "s", fingerprint, state, "t0", "t1")


def verdict(recorded: SubmissionRecord | RecordedSubmission | None, fingerprint: str) -> object:
    return submission_verdict(recorded, fingerprint, name="r/1/s", run_id="r", step="s")


def test_nothing_recorded_is_sent_and_a_verified_one_is_answered_from_the_record() -> None:
    assert verdict(None, "f1") is SubmissionVerdict.SEND
    assert verdict(record(SubmissionState.VERIFIED), "f1") is SubmissionVerdict.RECORDED
    assert not SubmissionVerdict.RECORDED.sends


def test_only_a_submission_proven_absent_goes_again_under_its_key() -> None:
    assert verdict(record(SubmissionState.FAILED), "f1") is SubmissionVerdict.SEND_AGAIN
    assert SubmissionVerdict.SEND_AGAIN.sends


@pytest.mark.parametrize("unsettled", ["in_flight", "dispatched", "unknown"])
def test_an_outcome_that_may_have_happened_is_refused(unsettled: str) -> None:
    with pytest.raises(OutcomeUnknown, match=f"already recorded as {unsettled}") as refused:
        verdict(record(SubmissionState(unsettled)), "f1")
    assert refused.value.context == {"run_id": "r", "step": "s"}


@pytest.mark.parametrize("state", list(SubmissionState))
def test_other_inputs_under_the_same_key_are_a_conflict_whatever_the_state(state: str) -> None:
    with pytest.raises(IdempotencyConflict, match="other inputs; nothing was sent"):
        verdict(record(SubmissionState(state)), "f2")


def test_the_journal_row_as_plain_values_gets_the_same_verdict() -> None:
    assert verdict(RecordedSubmission("verified", "f1"), "f1") is SubmissionVerdict.RECORDED
    with pytest.raises(IdempotencyConflict):
        verdict(RecordedSubmission("failed", "f1"), "f2")
