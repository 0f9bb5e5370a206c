"""When a positive control of a reconcile probe is due: plain function, no browser."""

from __future__ import annotations

import pytest

from northstar.run.probe_controls import control_due


@pytest.mark.parametrize(
    ("every", "due"),
    [
        (0, [1]),  # the default: the first verified submission of the run only
        (1, [1, 2, 3, 4, 5, 6]),
        (3, [1, 3, 6]),
    ],
)
def test_a_control_is_due_on_the_first_verified_submission_and_every_nth(
    every: int, due: list[int]
) -> None:
    assert [n for n in range(1, 7) if control_due(n, every)] == due
