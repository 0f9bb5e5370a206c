"""``Journal.finish_run_when`` decides from counts per state, not from every iteration's row.

It runs after each iteration of a distributed run; reading every iteration's state there
made a run of N iterations read N²/2 rows.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from northstar.distributed.decisions import finished_status
from northstar.journal import Journal, RunStatus
from northstar.results import IterationState
from tests.journal.helpers import create_run


def test_the_decision_gets_one_count_per_state(tmp_path: Path) -> None:
    seen: list[Counter[IterationState]] = []
    with Journal.open(tmp_path / "journal.db") as journal:
        run_id, _ = create_run(journal, total=3)
        for number in (1, 2, 3):
            journal.start_iteration(run_id, number, params_fingerprint="fp")
        for number in (1, 2):
            journal.mark_iteration(run_id, number, IterationState.VERIFIED)

        def decide(states: Counter[IterationState]) -> RunStatus | None:
            seen.append(states)
            return finished_status(states, 3)

        assert journal.finish_run_when(run_id, decide) is None
        journal.mark_iteration(run_id, 3, IterationState.FAILED)
        assert journal.finish_run_when(run_id, decide) is RunStatus.FAILED
        assert journal.finish_run_when(run_id, decide) is None  # final already: not asked

    running, settled = seen
    assert running == Counter({IterationState.VERIFIED: 2, IterationState.RUNNING: 1})
    assert settled == Counter({IterationState.VERIFIED: 2, IterationState.FAILED: 1})
