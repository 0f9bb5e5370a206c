"""How a program iteration ends after its open submissions were probed (no browser)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from northstar.programs.recovery import program_iteration_verdict
from northstar.results import IterationState
from northstar.run.reconcile import SubmissionCheck, SubmissionOutcome

SENT = datetime(2026, 1, 1, tzinfo=UTC)


def _check(outcome: SubmissionOutcome) -> SubmissionCheck:
    return SubmissionCheck("submit.flow.L9.1", outcome, SENT, 60)


@pytest.mark.parametrize(
    ("outcome", "state"),
    [
        (SubmissionOutcome.FOUND, IterationState.STOPPED),  # resume runs it; not sent again
        (SubmissionOutcome.ABSENT, IterationState.STOPPED),  # resume runs it; sent again
        (SubmissionOutcome.SETTLING, IterationState.UNKNOWN),  # still blocked
        (SubmissionOutcome.INCONCLUSIVE, IterationState.UNKNOWN),  # probe saw elsewhere: blocked
        (SubmissionOutcome.UNPROBED, IterationState.NEEDS_REVIEW),  # no probe: a person
    ],
)
def test_a_probed_program_iteration_is_resumable_only_once_settled(
    outcome: SubmissionOutcome, state: IterationState
) -> None:
    assert program_iteration_verdict([_check(outcome)]).state is state
