"""The journal's cost per step record: ``python -m northstar.journal.bench [--steps N]``.

Records N ``step_started``/``step_finished`` pairs (``synchronous=NORMAL``, one commit
each) into a fresh journal and prints the median and p95 per step, then times the
submission in-flight record, which is fsynced (``synchronous=FULL``). ``--dir`` puts the
journal on the file system to measure (fsync cost depends on it entirely). ``--journal
postgresql://...`` measures a Postgres journal instead (ordinary commits with
``synchronous_commit = off``, the in-flight record with ``on``); use an empty database.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from northstar.journal.store import Journal
from northstar.plan.compiler import compile_recipe
from northstar.plan.model import Plan
from northstar.recipe.loader import parse_recipe
from northstar.results import Evidence, StepResult, StepStatus

__all__ = ["main"]

_RECIPE = """
name: journal-bench
tabs:
  admin:
    start: http://127.0.0.1:8000/
steps:
  - id: open-form
    tab: admin
    goto: http://127.0.0.1:8000/form
  - id: fill-title
    tab: admin
    fill: {target: {label: Title}, value: "Hello"}
  - id: publish
    tab: admin
    effect: submit
    click: {target: {role: button, name: Publish}}
    expect:
      - text: {target: {role: status}, contains: Published}
"""
_EVIDENCE = (Evidence("text", "admin", "Saved", True, "Saved"),)


def bench_plan(iteration: int = 1) -> Plan:
    """A small real plan (three steps, the last a submission)."""
    return compile_recipe(parse_recipe(_RECIPE), {}, iteration=iteration)


def time_steps(journal: Journal, run_id: str, count: int) -> tuple[list[int], list[int]]:
    """Nanoseconds of each step_started and each step_finished, over ``count`` steps."""
    recorder = journal.recorder(run_id)
    per_iteration = len(bench_plan().steps)
    plans = _start_iterations(journal, run_id, range(1, count // per_iteration + 2))
    started_ns: list[int] = []
    finished_ns: list[int] = []
    for index in range(count):
        plan = plans[index // per_iteration]
        step = plan.steps[index % per_iteration]
        result = StepResult(step.id, step.tab, step.kind, StepStatus.PASSED, 1.0, _EVIDENCE)
        started_ns.append(_timed(lambda: recorder.step_started(plan, step)))  # noqa: B023
        finished_ns.append(_timed(lambda: recorder.step_finished(plan, result)))  # noqa: B023
    return started_ns, finished_ns


def time_in_flight(journal: Journal, run_id: str, count: int, first: int) -> list[int]:
    """Nanoseconds of each durable in-flight record, one submission per iteration."""
    recorder = journal.recorder(run_id)
    timings: list[int] = []
    for plan in _start_iterations(journal, run_id, range(first, first + count)):
        step = plan.steps[-1]
        recorder.step_started(plan, step)
        timings.append(_timed(lambda: recorder.submit_in_flight(plan, step)))  # noqa: B023
    return timings


def _start_iterations(journal: Journal, run_id: str, numbers: range) -> list[Plan]:
    plan = bench_plan()
    plans = [replace(plan, iteration=number) for number in numbers]
    for each in plans:
        journal.start_iteration(run_id, each.iteration, params_fingerprint=each.params_fingerprint)
    return plans


def _timed(call: Callable[[], object]) -> int:
    begin = time.perf_counter_ns()
    call()
    return time.perf_counter_ns() - begin


def _line(label: str, nanoseconds: list[int]) -> str:
    micros = sorted(n / 1000 for n in nanoseconds)
    p95 = micros[min(len(micros) - 1, round(0.95 * (len(micros) - 1)))]
    return f"{label:<52} median {statistics.median(micros):7.1f} µs   p95 {p95:7.1f} µs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m northstar.journal.bench")
    parser.add_argument("--steps", type=int, default=2000, help="step records (default 2000)")
    parser.add_argument("--in-flight", type=int, default=200, help="in-flight records")
    parser.add_argument("--dir", default=None, help="folder for the temporary journal")
    parser.add_argument("--journal", default=None, help="a postgresql:// URL to measure instead")
    args = parser.parse_args(argv)
    if args.journal:
        _measure(args.journal, "Postgres", args.steps, args.in_flight)
        return 0
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        path = Path(folder) / "journal.db"
        _measure(str(path), f"SQLite {sqlite3.sqlite_version}, WAL", args.steps, args.in_flight)
    return 0


def _measure(target: str, kind: str, steps: int, in_flight_count: int) -> None:
    with Journal.open(target) as journal:
        run_id, _ = journal.create_run(
            recipe_path="<bench>",
            recipe_name="journal-bench",
            definition_hash="0" * 64,
            project="bench",
            profile="bench",
            params_fingerprint="0" * 64,
            total_iterations=steps,
            options={},
        )
        started, finished = time_steps(journal, run_id, steps)
        in_flight = time_in_flight(journal, run_id, in_flight_count, first=steps + 10)
        print(f"journal {journal.location} ({kind})")
    pairs = [a + b for a, b in zip(started, finished, strict=True)]
    print(_line(f"step record, started+finished (NORMAL), n={len(pairs)}", pairs))
    print(_line("  step_started alone", started))
    print(_line("  step_finished alone", finished))
    print(_line(f"submission in flight (synchronous=FULL), n={len(in_flight)}", in_flight))


if __name__ == "__main__":
    raise SystemExit(main())
