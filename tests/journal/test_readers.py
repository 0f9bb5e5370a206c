"""Readers: read-only views of the journal, what they show, and what they cannot do."""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import json
import os
import pkgutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from northstar import readers
from northstar.errors import JournalError, RunNotFound, UsageInvalid
from northstar.journal import SCHEMA_VERSION, Journal, RunStatus
from northstar.journal.paths import JournalTarget
from northstar.journal.postgres import pg_errors
from northstar.plan.model import Plan
from northstar.readers import (
    INTERRUPTED,
    RunDetail,
    follow_run,
    get_run,
    list_runs,
    render_run,
    render_runs,
)
from northstar.results import Evidence, IterationResult, IterationState, StepResult, StepStatus
from northstar.run.recorder import JournalRecorder

from .helpers import create_run, make_plan

REPO_ROOT = Path(__file__).resolve().parents[2]
WRITE_WORDS = (
    "start",
    "run_",
    "dispatch",
    "create",
    "insert",
    "update",
    "delete",
    "write",
    "execute",
    "mark",
    "finish",
)


def record_iteration(journal: Journal, run_id: str, plan: Plan, *, verified: bool = True) -> None:
    number = plan.iteration
    journal.start_iteration(run_id, number, params_fingerprint=plan.params_fingerprint)
    recorder = JournalRecorder(journal, run_id)
    results = []
    for step in plan.steps:
        recorder.step_started(plan, step)
        ok = verified or step.id != "publish"
        evidence = (Evidence("text", step.tab, "Saved", ok, "Saved" if ok else "Error"),)
        error = None if ok else {"code": "EXPECTATION_FAILED", "message": "no Saved text"}
        status = StepStatus.PASSED if ok else StepStatus.FAILED
        result = StepResult(step.id, step.tab, step.kind, status, 2.0, evidence, error)
        recorder.step_finished(plan, result)
        results.append(result)
        if not ok:
            break
    if verified:
        journal.save_outputs(run_id, number, {"url": f"/posts/{number}"})
        outcome = IterationResult(number, IterationState.VERIFIED, tuple(results), duration_ms=40.0)
    else:
        outcome = IterationResult(
            number,
            IterationState.FAILED,
            tuple(results),
            duration_ms=40.0,
            reason_code="EXPECTATION_FAILED",
            reason="no Saved text",
            failing_step="publish",
        )
    journal.finish_iteration(run_id, outcome)


@pytest.fixture
def finished_run(journal: Journal, plan: Plan) -> str:
    run_id, _ = create_run(journal)
    journal.event(run_id, "run_started", iterations=2)
    record_iteration(journal, run_id, plan)
    record_iteration(journal, run_id, make_plan(iteration=2), verified=False)
    journal.finish_run(run_id, RunStatus.FAILED)
    return run_id


# What readers show.


def test_list_runs_newest_first_with_counts(
    journal: Journal, journal_target: JournalTarget
) -> None:
    first, _ = create_run(journal)
    second, _ = create_run(journal, total=5)
    runs = list_runs(journal_target)
    assert [r.run_id for r in runs] == [second, first]
    assert (runs[0].total_iterations, runs[0].iterations_verified) == (5, 0)
    assert runs[0].effective_status == "running"  # this process is the worker, alive
    assert [r.run_id for r in list_runs(journal_target, limit=1)] == [second]
    with pytest.raises(UsageInvalid):
        list_runs(journal_target, limit=0)


def test_get_run_has_iterations_steps_outputs_reasons_and_events(
    finished_run: str, journal_target: JournalTarget
) -> None:
    detail = get_run(journal_target, finished_run)
    assert detail.effective_status == "failed"
    assert detail.summary.iterations_verified == 1
    first, second = detail.iterations
    assert (first.state, first.outputs, first.evidence_count) == (
        "verified",
        {"url": "/posts/1"},
        3,
    )
    assert [s.step_id for s in first.steps] == ["open-form", "fill-password", "publish"]
    publish = first.steps[2]
    assert publish.status == "passed"
    assert [event for event, _ in publish.events] == ["started", "passed"]
    assert publish.evidence[0]["found"] == "Saved"
    assert (second.state, second.reason_code, second.failing_step) == (
        "failed",
        "EXPECTATION_FAILED",
        "publish",
    )
    assert second.steps[-1].error == {"code": "EXPECTATION_FAILED", "message": "no Saved text"}
    assert [(e.name, e.payload) for e in detail.events] == [("run_started", {"iterations": 2})]
    assert detail.options == {"interval": 0}


def test_details_and_summaries_are_plain_json(
    finished_run: str, journal_target: JournalTarget
) -> None:
    detail = get_run(journal_target, finished_run)
    data = json.loads(json.dumps(detail.to_dict()))
    assert data["run_id"] == finished_run
    assert data["iterations"][0]["steps"][0]["step_id"] == "open-form"
    assert json.loads(json.dumps(list_runs(journal_target)[0].to_dict()))["status"] == "failed"


def test_an_unknown_run_is_run_not_found(journal: Journal, journal_target: JournalTarget) -> None:
    with pytest.raises(RunNotFound) as caught:
        get_run(journal_target, "r-000000000000")
    assert caught.value.code == "RUN_NOT_FOUND"


def test_render_run_is_compact_with_one_line_per_step(
    finished_run: str, journal_target: JournalTarget
) -> None:
    text = render_run(get_run(journal_target, finished_run))
    lines = text.splitlines()
    assert lines[0].startswith(f"run {finished_run}  journal-test  failed  1/2 verified")
    assert sum("open-form" in line for line in lines) == 2  # once per iteration
    assert "outputs: url=/posts/1" in text
    assert "EXPECTATION_FAILED at step 'publish': no Saved text" in text
    assert len(lines) < 20


def test_render_runs_is_a_table(finished_run: str, journal_target: JournalTarget) -> None:
    text = render_runs(list_runs(journal_target))
    header, row = text.splitlines()
    assert header.split()[:3] == ["RUN", "STATUS", "VERIFIED"]
    assert row.split()[:3] == [finished_run, "failed", "1/2"]
    assert render_runs([]) == "no runs in the journal"


# The worker is gone: nothing it left running is verified.


def run_worker(journal_path: Path, *, then: Callable[[subprocess.Popen[str]], None]) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    worker = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("crashing_worker.py")), str(journal_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO_ROOT,
    )
    assert worker.stdout is not None
    run_id = worker.stdout.readline().strip()
    then(worker)
    worker.wait(timeout=60)
    return run_id


def sigkill(worker: subprocess.Popen[str]) -> None:
    os.kill(worker.pid, signal.SIGKILL)


def let_exit(worker: subprocess.Popen[str]) -> None:
    assert worker.stdin is not None
    worker.stdin.write("exit\n")
    worker.stdin.flush()


def test_step_records_survive_sigkill_and_show_as_interrupted(journal_path: Path) -> None:
    run_id = run_worker(journal_path, then=sigkill)
    assert run_id.startswith("r-")

    detail = get_run(journal_path, run_id)
    assert detail.summary.status == "running"
    assert detail.effective_status == INTERRUPTED
    assert detail.is_final
    [iteration] = detail.iterations
    assert (iteration.state, iteration.effective_state) == ("running", INTERRUPTED)
    steps = {s.step_id: (s.status, s.effective_status) for s in iteration.steps}
    assert steps == {
        "open-form": ("passed", "passed"),
        "fill-password": ("passed", "passed"),
        "publish": ("in_flight", INTERRUPTED),
    }
    assert "interrupted (worker" in render_run(detail)
    assert list_runs(journal_path)[0].effective_status == INTERRUPTED


def test_a_worker_that_exits_0_without_a_result_is_not_verified(journal_path: Path) -> None:
    exit_codes: list[int | None] = []

    def exit_cleanly(worker: subprocess.Popen[str]) -> None:
        let_exit(worker)
        exit_codes.append(worker.wait(timeout=60))

    run_id = run_worker(journal_path, then=exit_cleanly)
    assert exit_codes == [0]
    detail = get_run(journal_path, run_id)
    assert detail.iterations[0].effective_state == INTERRUPTED
    assert detail.summary.iterations_verified == 0


def test_a_run_that_ended_with_an_iteration_left_running_shows_it_interrupted(
    journal: Journal, journal_target: JournalTarget, plan: Plan
) -> None:
    run_id, _ = create_run(journal)
    journal.start_iteration(run_id, 1, params_fingerprint=plan.params_fingerprint)
    journal.finish_run(run_id, RunStatus.STOPPED)
    [iteration] = get_run(journal_target, run_id).iterations
    assert iteration.effective_state == INTERRUPTED


def test_a_worker_on_another_host_is_trusted(
    journal: Journal, journal_target: JournalTarget
) -> None:
    run_id, _ = create_run(journal)
    journal._db.conn.execute("UPDATE runs SET worker_host = 'elsewhere'")
    detail = get_run(journal_target, run_id, is_alive=lambda pid: False)
    assert detail.effective_status == "running"


def test_pid_alive_probes_without_signalling() -> None:
    assert readers.pid_alive(os.getpid())
    assert not readers.pid_alive(0)  # would address our own process group
    assert not readers.pid_alive(-1)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=60)
    assert not readers.pid_alive(child.pid)


# Following a run.


async def test_follow_run_reports_changes_until_the_run_ends(
    journal: Journal, journal_target: JournalTarget, plan: Plan
) -> None:
    run_id, _ = create_run(journal, total=1)
    writer_steps: list[Callable[[], None]] = [
        lambda: journal.start_iteration(run_id, 1, params_fingerprint="p"),
        lambda: journal.event(run_id, "iteration_waiting", seconds=1),
        lambda: journal.finish_iteration(run_id, IterationResult(1, IterationState.VERIFIED)),
        lambda: journal.finish_run(run_id, RunStatus.VERIFIED),
    ]
    polls: list[int] = []

    def advance_writer() -> None:
        polls.append(1)
        writer_steps.pop(0)()

    seen: list[RunDetail] = []
    last = await follow_run(journal_target, run_id, poll=advance_writer, on_change=seen.append)

    assert last.effective_status == "verified"
    assert len(polls) == 4
    assert writer_steps == []
    assert [d.effective_status for d in seen] == ["running"] * 4 + ["verified"]
    assert [len(d.iterations) for d in seen] == [0, 1, 1, 1, 1]


async def test_follow_run_accepts_an_async_wait_and_skips_unchanged_reads(
    journal: Journal, journal_target: JournalTarget
) -> None:
    run_id, _ = create_run(journal)
    waits: list[int] = []

    async def wait() -> None:
        waits.append(1)
        await asyncio.sleep(0)
        if len(waits) == 3:
            journal.finish_run(run_id, RunStatus.STOPPED)

    seen: list[RunDetail] = []
    last = await follow_run(journal_target, run_id, poll=wait, on_change=seen.append)
    assert last.effective_status == "stopped"
    assert len(waits) == 3
    assert [d.effective_status for d in seen] == ["running", "stopped"]


async def test_follow_run_ends_at_once_when_the_worker_is_gone(
    journal: Journal, journal_target: JournalTarget
) -> None:
    run_id, _ = create_run(journal)

    def never() -> None:
        raise AssertionError("no wait is needed for an interrupted run")

    last = await follow_run(
        journal_target, run_id, poll=never, on_change=lambda d: None, is_alive=lambda pid: False
    )
    assert last.effective_status == INTERRUPTED


# What readers cannot do.


def readers_modules() -> list[ModuleType]:
    """The package and each of its modules: every one is held to what readers cannot do."""
    names = [f"{readers.__name__}.{m.name}" for m in pkgutil.iter_modules(readers.__path__)]
    return [readers, *(importlib.import_module(name) for name in names)]


@pytest.mark.parametrize("module", readers_modules(), ids=lambda m: m.__name__)
def test_readers_have_no_operation_that_writes_or_starts(module: ModuleType) -> None:
    public = [name for name in module.__all__ if callable(getattr(module, name))]
    assert public
    offending = [n for n in public if any(word in n.lower() for word in WRITE_WORDS)]
    assert offending == []
    module_level = [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and inspect.isfunction(value)
        and (
            f"{value.__module__}.".startswith(f"{module.__name__}.")
            # The liveness probe, shared with the run engine, where a reader exposes it.
            or (value.__module__ == "northstar.journal.workers" and name in module.__all__)
        )
    ]
    assert sorted(module_level) == sorted(
        n for n in public if inspect.isfunction(getattr(module, n))
    )


# Where the journal is and how to reach a Postgres one: no writer in either.
# Where the journal is, how to reach Postgres, and whether a run's worker lives (a probe
# shared with the run engine, which may not import the readers).
READ_ONLY_JOURNAL_MODULES = {
    "northstar.journal.paths",
    "northstar.journal.postgres",
    "northstar.journal.workers",
}


def test_readers_import_nothing_that_can_start_or_write() -> None:
    imported: set[str] = set()
    for path in Path(readers.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
    forbidden = ("northstar.run.runner", "northstar.journal", "browser_adapters", "playwright")
    imported -= READ_ONLY_JOURNAL_MODULES
    assert [m for m in imported if m.startswith(forbidden)] == []
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, northstar.readers; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    ).stdout.split()
    loaded = [m for m in loaded if m not in READ_ONLY_JOURNAL_MODULES | {"northstar.journal"}]
    assert [m for m in loaded if m.startswith(forbidden[1:])] == []


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO events (run_id, at, name) VALUES ('r-x', 't', 'n')",
        "UPDATE runs SET status = 'verified'",
        "DELETE FROM runs",
        "CREATE TABLE sneaky (x)",
    ],
)
def test_the_reader_connection_is_read_only(
    finished_run: str, journal_target: JournalTarget, statement: str
) -> None:
    open_readonly = readers.queries._open_readonly
    refused = (sqlite3.OperationalError, *pg_errors())  # psycopg: ReadOnlySqlTransaction
    with open_readonly(journal_target) as conn, pytest.raises(refused):
        conn.execute(statement)
    assert get_run(journal_target, finished_run).summary.status == "failed"


def test_a_reader_does_not_wait_for_a_busy_writer(
    journal: Journal, journal_target: JournalTarget, finished_run: str
) -> None:
    conn = journal._db.conn
    conn.execute("BEGIN" if journal._db.postgres else "BEGIN IMMEDIATE")
    conn.execute("UPDATE runs SET status = 'verified'")
    try:
        assert get_run(journal_target, finished_run).summary.status == "failed"  # last commit
    finally:
        conn.execute("ROLLBACK")


def test_the_reader_understands_the_writers_schema() -> None:
    assert readers.READ_SCHEMA_VERSION == SCHEMA_VERSION


def test_readers_refuse_what_is_not_a_journal_they_can_read(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no journal at"):
        list_runs(tmp_path / "missing.db")
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(JournalError, match="not a Northstar journal"):
        list_runs(foreign)
    future = tmp_path / "future.db"
    Journal.open(future).close()
    with sqlite3.connect(future) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(JournalError, match="schema version"):
        list_runs(future)
