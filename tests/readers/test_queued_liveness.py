"""A queued run is running until the journal settles it, whichever worker claimed it last.

On both backends: a run whose last claimer's pid is gone reads ``interrupted`` when one
process ran it, and still ``running`` when it was queued (``run_queued``), until a local
``resume`` takes it over (``run_resumed``), after which its pid counts again.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from northstar.journal import Journal, RunStatus
from northstar.journal.paths import JournalTarget
from northstar.readers import INTERRUPTED, get_run, list_runs
from northstar.readers.bounded import read_window
from northstar.readers.liveness import queue_of, worker_gone
from northstar.results import IterationState
from tests.journal.helpers import create_run, make_plan

_DATABASES = itertools.count(1)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=60)
    return child.pid


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> JournalTarget:
    if request.param == "sqlite":
        return tmp_path / "journal.db"
    postgres: Any = request.getfixturevalue("postgres")
    url: str = postgres.create_database(f"queued_liveness_{next(_DATABASES)}")
    return url


@pytest.fixture
def journal(target: JournalTarget) -> Iterator[Journal]:
    with Journal.open(target) as opened:
        yield opened


def claimed_by_a_dead_worker(journal: Journal) -> str:
    run_id, _ = create_run(journal, total=2)
    journal.start_iteration(run_id, 1, params_fingerprint=make_plan().params_fingerprint)
    journal._db.conn.execute("UPDATE runs SET worker_pid = ?", (dead_pid(),))
    return run_id


def test_a_dead_last_claimer_interrupts_a_local_run(
    journal: Journal, target: JournalTarget
) -> None:
    run_id = claimed_by_a_dead_worker(journal)
    assert get_run(target, run_id).effective_status == INTERRUPTED  # the control


def test_a_queued_run_stays_running_when_its_last_claimer_died(
    journal: Journal, target: JournalTarget
) -> None:
    run_id = claimed_by_a_dead_worker(journal)
    journal.event(run_id, "run_queued", queue="posts", iterations=2)
    detail = get_run(target, run_id)
    assert (detail.effective_status, detail.summary.queue) == ("running", "posts")
    assert detail.iterations[0].effective_state == "running"
    assert read_window(target, run_id).effective_status == "running"  # watch's reader
    assert [run.effective_status for run in list_runs(target)] == ["running"]
    journal.mark_iteration(run_id, 1, IterationState.VERIFIED)
    journal.finish_run(run_id, RunStatus.VERIFIED)
    assert get_run(target, run_id).is_final  # the journal ends it, as a lane does


def test_a_blocked_queued_run_is_final_for_watch_only_once_no_worker_holds_an_iteration(
    journal: Journal, target: JournalTarget
) -> None:
    """One unknown iteration blocks a queued run while another worker's lane still runs the
    next: ``watch`` (which ends at ``is_final``) must go on following it until that one
    is recorded, or its ``reconcile`` would be refused as still in a worker's hands."""
    run_id, _ = create_run(journal, total=2)
    journal.event(run_id, "run_queued", queue="posts", iterations=2)
    fingerprint = make_plan().params_fingerprint
    for number in (1, 2):
        journal.start_iteration(run_id, number, params_fingerprint=fingerprint)
    journal.mark_iteration(run_id, 1, IterationState.UNKNOWN, reason_code="OUTCOME_UNKNOWN")
    journal.finish_run(run_id, RunStatus.BLOCKED)
    for read in (get_run, read_window):  # ``show`` and ``watch``'s reader
        detail = read(target, run_id)
        assert (detail.summary.status, detail.is_final) == ("blocked", False)
    journal.mark_iteration(run_id, 2, IterationState.VERIFIED)
    for read in (get_run, read_window):
        assert read(target, run_id).is_final


def test_a_blocked_run_of_one_process_is_final_at_once(
    journal: Journal, target: JournalTarget
) -> None:
    """Not queued: its one process ended it, whatever the journal says of an iteration."""
    run_id, _ = create_run(journal, total=2)
    journal.start_iteration(run_id, 1, params_fingerprint=make_plan().params_fingerprint)
    journal.finish_run(run_id, RunStatus.BLOCKED)
    assert get_run(target, run_id).is_final


def test_a_local_resume_of_a_queued_run_is_judged_by_its_pid_again(
    journal: Journal, target: JournalTarget
) -> None:
    run_id = claimed_by_a_dead_worker(journal)
    journal.event(run_id, "run_queued", queue="posts", iterations=2)
    journal.event(run_id, "run_resumed", first=1, remaining=2)
    assert journal.serving_queue(run_id) is None
    detail = get_run(target, run_id)
    assert (detail.effective_status, detail.summary.queue) == (INTERRUPTED, None)


def test_liveness_of_a_queued_run_never_probes_a_pid() -> None:
    def probe(pid: int) -> bool:
        raise AssertionError("a queued run's pid was probed")

    assert not worker_gone(123, None, probe, queue="posts")
    assert queue_of({"queue": "posts", "iterations": 3}) == "posts"
    assert queue_of({"first": 1, "remaining": 2}) is None
    assert queue_of({"queue": ""}) is None
