"""Whether a submission may be sent, from what the journal holds for its key: the one rule.

Every front end asks ``submission_verdict``: the journal's in-flight write asks it inside
its transaction (``northstar.journal._steps.open_submission``), and the agent path and the
program broker ask it before anything on the page is looked up, so that the same call
made again after the page moved on still finds its earlier result.

| recorded under the key | same input fingerprint | verdict |
| --- | --- | --- |
| nothing | (any) | ``SEND`` |
| ``failed`` (proven absent by reconciliation) | yes | ``SEND_AGAIN``, under the same key |
| ``verified`` | yes | ``RECORDED``: the recorded result stands, nothing is sent |
| ``in_flight``, ``dispatched``, ``unknown`` | yes | refused: ``OUTCOME_UNKNOWN`` |
| anything | no | refused: ``IDEMPOTENCY_CONFLICT`` |

A refusal is raised before anything is dispatched. The function is pure: plain values in,
a verdict or a coded error out.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from northstar.errors import IdempotencyConflict, OutcomeUnknown

__all__ = ["Recorded", "RecordedSubmission", "SubmissionVerdict", "submission_verdict"]


class SubmissionVerdict(Enum):
    SEND = "send"  # nothing recorded under the key
    SEND_AGAIN = "send_again"  # proven absent by reconciliation: may go again, same key
    RECORDED = "recorded"  # done: answer with the recorded result, send nothing

    @property
    def sends(self) -> bool:
        return self is not SubmissionVerdict.RECORDED


class Recorded(Protocol):
    """What the journal holds for a key (a ``SubmissionRecord`` is one)."""

    @property
    def state(self) -> str: ...

    @property
    def input_fingerprint(self) -> str: ...


@dataclass(frozen=True, slots=True)
class RecordedSubmission:
    """A recorded submission as two plain values (the journal's SQL row)."""

    state: str
    input_fingerprint: str


def submission_verdict(
    recorded: Recorded | None,
    fingerprint: str,
    *,
    name: str,
    unknown_fix: str | None = None,
    conflict_fix: str | None = None,
    **context: Any,
) -> SubmissionVerdict:
    """``SEND``, ``SEND_AGAIN``, ``RECORDED``, or a refusal (see the module's table).

    ``name`` names the submission in a refusal's message; ``context`` (run, iteration,
    step) goes on the error; the fixes say what the caller's user can do next.
    """
    if recorded is None:
        return SubmissionVerdict.SEND
    if recorded.input_fingerprint != fingerprint:
        raise IdempotencyConflict(
            f"submission {name} was recorded with other inputs; nothing was sent",
            fix=conflict_fix,
            **context,
        )
    if recorded.state == "verified":
        return SubmissionVerdict.RECORDED
    if recorded.state == "failed":
        return SubmissionVerdict.SEND_AGAIN
    raise OutcomeUnknown(
        f"submission {name} is already recorded as {recorded.state}: it may have happened, "
        "so it is not sent again",
        fix=unknown_fix,
        **context,
    )
