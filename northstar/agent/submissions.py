"""Whether an agent's submission may be sent, from what the journal holds for its key.

The same rule as a recipe's submit step (``northstar.journal._steps.open_submission``),
asked before anything on the page is looked up, so that the same call made again after
the page moved on still finds its earlier answer instead of a stale reference.
"""

from __future__ import annotations

from enum import Enum

from northstar.errors import IdempotencyConflict, OutcomeUnknown
from northstar.journal.schema import SubmissionState
from northstar.journal.store import SubmissionRecord

__all__ = ["SubmissionVerdict", "submission_verdict"]


class SubmissionVerdict(Enum):
    SEND = "send"  # never sent, or proven absent by reconciliation
    RECORDED = "recorded"  # done: answer with the recorded result, send nothing


def submission_verdict(record: SubmissionRecord | None, fingerprint: str) -> SubmissionVerdict:
    """``SEND``, ``RECORDED``, or a refusal: other inputs, or an outcome not known."""
    if record is None:
        return SubmissionVerdict.SEND
    context = {"run_id": record.run_id, "step": record.step_id}
    if record.input_fingerprint != fingerprint:
        raise IdempotencyConflict(
            f"submission {record.step_id} was made with other inputs; nothing was sent",
            fix="Use a new key for a different submission.",
            **context,
        )
    if record.state is SubmissionState.VERIFIED:
        return SubmissionVerdict.RECORDED
    if record.state is SubmissionState.FAILED:
        return SubmissionVerdict.SEND
    raise OutcomeUnknown(
        f"submission {record.step_id} is recorded as {record.state.value}: it may have "
        "happened, so it is not sent again",
        fix="Observe the tab to see whether it took effect; submit under a new key if not.",
        **context,
    )
