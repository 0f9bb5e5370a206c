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
from pathlib import Path

from northstar.journal.step_log import StepRow
from northstar.journal.store import Journal
from northstar.results import Evidence, StepResult, StepStatus

__all__ = ["main"]

# A small recipe's steps as the journal keeps them (three steps, the last a submission).
_STEPS = (
    StepRow("open-form", "admin", "goto", seq=0, retry_json='{"attempts": 3}'),
    StepRow("fill-title", "admin", "fill", seq=1, retry_json='{"attempts": 3}'),
    StepRow("publish", "admin", "click", seq=2, retry_json='{"attempts": 1}'),
)
_EVIDENCE = (Evidence("text", "admin", "Saved", True, "Saved"),)
_FINGERPRINT = "0" * 64


def time_steps(journal: Journal, run_id: str, count: int) -> tuple[list[int], list[int]]:
    """Nanoseconds of each step's started and each step's finished record, over ``count``."""
    log = journal.steps(run_id)
    per_iteration = len(_STEPS)
    numbers = _start_iterations(journal, run_id, range(1, count // per_iteration + 2))
    started_ns: list[int] = []
    finished_ns: list[int] = []
    for index in range(count):
        number = numbers[index // per_iteration]
        step = _STEPS[index % per_iteration]
        result = StepResult(step.step_id, step.tab, step.kind, StepStatus.PASSED, 1.0, _EVIDENCE)
        started_ns.append(_timed(lambda: log.started(number, step)))  # noqa: B023
        finished_ns.append(_timed(lambda: log.finished(number, result, ())))  # noqa: B023
    return started_ns, finished_ns


def time_in_flight(journal: Journal, run_id: str, count: int, first: int) -> list[int]:
    """Nanoseconds of each durable in-flight record, one submission per iteration."""
    log = journal.steps(run_id)
    step = _STEPS[-1]
    timings: list[int] = []
    for number in _start_iterations(journal, run_id, range(first, first + count)):
        log.started(number, step)
        timings.append(_timed(lambda: log.in_flight(number, step, _FINGERPRINT)))  # noqa: B023
    return timings


def _start_iterations(journal: Journal, run_id: str, numbers: range) -> list[int]:
    for number in numbers:
        journal.start_iteration(run_id, number, params_fingerprint=_FINGERPRINT)
    return list(numbers)


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
