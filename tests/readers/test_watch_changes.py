"""``northstar watch`` prints what changed between two reads, not the whole run again.

The journal is written through its own API between polls (the poll *is* the writer), so
the follow loop is driven one read at a time with no clock and no sleep.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from northstar.cli import cli
from northstar.cli.journal_commands import ChangePrinter
from northstar.journal import Journal, RunStatus
from northstar.plan.model import Plan
from northstar.readers import follow_run
from northstar.readers.changes import change_lines
from northstar.results import Evidence, IterationResult, IterationState, StepResult, StepStatus
from northstar.run.recorder import JournalRecorder
from tests.journal.helpers import StepClock, create_run, make_plan


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


@pytest.fixture
def journal(journal_path: Path) -> Iterator[Journal]:
    with Journal.open(journal_path, now=StepClock()) as opened:
        yield opened


def _passed(plan: Plan, index: int) -> StepResult:
    step = plan.steps[index]
    evidence = (Evidence("text", step.tab, "Saved", True, "Saved"),)
    return StepResult(step.id, step.tab, step.kind, StepStatus.PASSED, 5.0, evidence)


def _failed(plan: Plan, index: int) -> StepResult:
    step = plan.steps[index]
    error = {"code": "EXPECTATION_FAILED", "message": "no Saved text"}
    return StepResult(step.id, step.tab, step.kind, StepStatus.FAILED, 7.0, (), error)


def _writer(journal: Journal, run_id: str) -> list[Callable[[], None]]:
    """One journal write per poll: two iterations, the second failing at its last step."""
    first, second = make_plan(1), make_plan(2)
    recorder = JournalRecorder(journal, run_id)
    failure = IterationResult(
        2,
        IterationState.FAILED,
        (_passed(second, 0), _failed(second, 1)),
        duration_ms=30.0,
        reason_code="EXPECTATION_FAILED",
        reason="no Saved text",
        failing_step="fill-password",
    )
    return [
        lambda: journal.start_iteration(run_id, 1, params_fingerprint="p"),
        lambda: recorder.step_started(first, first.steps[0]),
        lambda: recorder.step_finished(first, _passed(first, 0)),
        lambda: journal.finish_iteration(
            run_id, IterationResult(1, IterationState.VERIFIED, duration_ms=20.0)
        ),
        lambda: journal.start_iteration(run_id, 2, params_fingerprint="p"),
        lambda: (
            recorder.step_started(second, second.steps[0]),
            recorder.step_finished(second, _passed(second, 0)),
            recorder.step_started(second, second.steps[1]),
            recorder.step_finished(second, _failed(second, 1)),
        ),
        lambda: journal.finish_iteration(run_id, failure),
        lambda: journal.finish_run(run_id, RunStatus.FAILED),
    ]


async def test_watch_prints_only_what_changed_at_each_poll(
    journal: Journal, journal_path: Path
) -> None:
    run_id, _ = create_run(journal, total=2)
    writes = _writer(journal, run_id)
    printed: list[list[str]] = []
    batch: list[str] = []

    def poll() -> None:
        printed.append(batch.copy())
        batch.clear()
        writes.pop(0)()

    await follow_run(journal_path, run_id, poll=poll, on_change=ChangePrinter(batch.append))
    printed.append(batch.copy())

    assert writes == []
    assert printed == [
        [f"run {run_id}  journal-test  running  0/2 verified"],
        ["iteration 1: running"],
        ["  iteration 1 step 1 open-form [admin]: running"],
        ["  iteration 1 step 1 open-form [admin]: passed in 5 ms"],
        ["iteration 1: running -> verified in 0.02 s"],
        ["iteration 2: running"],
        [
            "  iteration 2 step 1 open-form [admin]: passed in 5 ms",
            "  iteration 2 step 2 fill-password [admin]: failed in 7 ms"
            "  EXPECTATION_FAILED: no Saved text",
        ],
        [
            "iteration 2: running -> failed in 0.03 s  EXPECTATION_FAILED at step"
            " 'fill-password': no Saved text"
        ],
        [f"run {run_id}: running -> failed, 1/2 verified"],
    ]


def test_nothing_changed_means_no_lines(journal: Journal, journal_path: Path) -> None:
    from northstar.readers import get_run

    run_id, _ = create_run(journal, total=1)
    journal.start_iteration(run_id, 1, params_fingerprint="p")
    detail = get_run(journal_path, run_id)
    assert change_lines(detail, detail) == []
    assert change_lines(None, detail) == [
        f"run {run_id}  journal-test  running  0/1 verified",
        "iteration 1: running",
    ]


def test_watch_of_a_finished_run_prints_it_once_and_exits_by_its_verdict(
    journal: Journal, journal_path: Path
) -> None:
    run_id, _ = create_run(journal, total=1)
    journal.start_iteration(run_id, 1, params_fingerprint="p")
    journal.finish_iteration(run_id, IterationResult(1, IterationState.VERIFIED, duration_ms=9.0))
    journal.finish_run(run_id, RunStatus.VERIFIED)
    result = CliRunner().invoke(cli, ["watch", run_id, "--journal", str(journal_path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"run {run_id}  journal-test  verified  1/1 verified",
        "iteration 1: verified in 0.01 s",
        f"run {run_id}: verified, 1 of 1 iterations verified",  # its ending, as `run` printed it
    ]
