"""Reconcile and resume leave a queued run alone until the journal records it settled.

A queued run's pid is only its last claimer's: a live one must not block a settled run,
a dead one must not open a run that other workers are still working on.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from northstar.errors import RunBlocked
from northstar.journal import Journal, RunStatus
from northstar.results import IterationState, queued_run_busy
from northstar.run.recovery import refuse_if_live
from tests.journal.helpers import create_run, make_plan

RUNNING, VERIFIED, UNKNOWN = IterationState.RUNNING, IterationState.VERIFIED, IterationState.UNKNOWN


def test_a_queued_run_is_busy_while_any_iteration_is_unsettled_or_still_queued() -> None:
    assert queued_run_busy("running", 3, [VERIFIED, VERIFIED])  # one still on the queue
    assert queued_run_busy("blocked", 3, [UNKNOWN, RUNNING])  # another worker's lane runs
    assert queued_run_busy("running", 1, [IterationState.PENDING])
    assert not queued_run_busy("blocked", 3, [UNKNOWN, VERIFIED])  # the rest were skipped
    assert not queued_run_busy("running", 2, [VERIFIED, UNKNOWN])  # all settled, not ended


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal.open(tmp_path / "journal.db") as opened:
        yield opened


def queued_run(journal: Journal, total: int) -> str:
    run_id, _ = create_run(journal, total=total)
    journal.event(run_id, "run_queued", queue="posts", iterations=total)
    return run_id


def start(journal: Journal, run_id: str, number: int) -> None:
    journal.start_iteration(run_id, number, params_fingerprint=make_plan(number).params_fingerprint)


def test_recovery_refuses_a_queued_run_whose_iteration_another_worker_runs(
    journal: Journal,
) -> None:
    run_id = queued_run(journal, 2)
    start(journal, run_id, 1)
    journal.mark_iteration(run_id, 1, UNKNOWN, reason_code="OUTCOME_UNKNOWN", reason="r")
    start(journal, run_id, 2)
    journal.finish_run(run_id, RunStatus.BLOCKED)
    journal._db.conn.execute("UPDATE runs SET worker_pid = 999999999")  # no such process
    with pytest.raises(RunBlocked, match="queue 'posts'") as refused:
        refuse_if_live(journal.run_record(run_id), journal)
    assert "start one on 'posts'" in (refused.value.fix or "")
    journal.mark_iteration(run_id, 2, VERIFIED)
    refuse_if_live(journal.run_record(run_id), journal)  # settled: reconcile may go on


def test_recovery_lets_a_settled_queued_run_go_though_its_last_claimer_lives(
    journal: Journal,
) -> None:
    run_id = queued_run(journal, 1)
    start(journal, run_id, 1)  # claimed by this very (live) process
    journal.mark_iteration(run_id, 1, UNKNOWN, reason_code="OUTCOME_UNKNOWN", reason="r")
    assert journal.run_record(run_id).worker_pid == os.getpid()
    refuse_if_live(journal.run_record(run_id), journal)  # running, yet every iteration settled
    with pytest.raises(RunBlocked, match="still running in process"):
        refuse_if_live(journal.run_record(run_id))  # judged by the pid, it would be refused
