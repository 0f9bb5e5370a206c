"""Does a long run stay flat? ``python -m northstar.bench.long_run [--iterations N]``

Runs N iterations (default 100,000) of ``recipes/contact-form.yaml`` with ``execute_run``
on the fake browser (every call answers at once), recording into a real journal, and
prints per window of 1,000 iterations the journal's cost per iteration (the time spent in
the database driver's ``execute``, measured by wrapping the connection) and the whole
iteration's wall time, and the process's peak resident memory (``ru_maxrss``) when the
window closed. The figure that matters is the ratio of the last window to the first: a
query that scans every iteration so far, or an index that is missing, makes it grow with
the run; a flat journal keeps it near 1. A run engine that keeps every iteration's result
makes the peak RSS climb window after window; a bounded one levels off.

The journal is a fresh SQLite file by default; ``--journal postgresql://...`` measures an
(empty) Postgres database, and ``--postgres`` starts a throwaway cluster for it
(``fixtures.postgres_server``, from a checkout).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from northstar.bench._fake_browser import FAKE_BASE_URL, _InstantHost
from northstar.bench._workload import BenchFailed, recipe_request
from northstar.journal import Journal
from northstar.journal._db import Connection, JournalDb, utc_now
from northstar.logs import configure_logging
from northstar.results import IterationResult
from northstar.run.execution import execute_run

__all__ = ["LongRun", "TimedConnection", "Window", "flatness", "main", "measure", "windows"]

WINDOW = 1000


class TimedConnection:
    """A journal connection that adds up the nanoseconds spent in ``execute``.

    Only the calls are timed, not the rows fetched afterwards: the journal's writes fetch
    at most one row, so the call is the cost.
    """

    def __init__(self, inner: Connection) -> None:
        self._inner = inner
        self.spent_ns = 0
        self.cpu_ns = 0  # this thread's CPU inside the driver: SQLite's own work, not waits
        self.statements = 0

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        begin, cpu = time.perf_counter_ns(), time.thread_time_ns()
        try:
            return self._inner.execute(sql, parameters)
        finally:
            self._add(begin, cpu)

    def executemany(self, sql: str, rows: Any, /) -> object:
        begin, cpu = time.perf_counter_ns(), time.thread_time_ns()
        try:
            return self._inner.executemany(sql, rows)
        finally:
            self._add(begin, cpu)

    def _add(self, begin: int, cpu: int) -> None:
        self.spent_ns += time.perf_counter_ns() - begin
        self.cpu_ns += time.thread_time_ns() - cpu
        self.statements += 1

    @property
    def in_transaction(self) -> bool:
        return self._inner.in_transaction

    def close(self) -> None:
        self._inner.close()


@dataclass(frozen=True, slots=True)
class Window:
    """One window of iterations: the journal's and the whole iteration's cost, in µs."""

    first: int
    last: int
    journal_us: float
    wall_us: float
    statements: float
    journal_cpu_us: float = 0.0
    peak_rss_mb: float = 0.0  # the process's peak resident memory when the window closed


@dataclass(frozen=True, slots=True)
class LongRun:
    """The windows of one run and the last window's costs over the first's."""

    journal: str
    iterations: int
    windows: list[Window]
    journal_ratio: float
    wall_ratio: float
    cpu_ratio: float


Mark = tuple[int, int, int, float, int, float]


def windows(marks: list[Mark], size: int = WINDOW) -> list[Window]:
    """Per-window averages from cumulative marks.

    A mark is ``(iteration, journal ns, statements, wall s, journal CPU ns, peak RSS
    MB)``; the marks start with the state before the first iteration (iteration 0).
    """
    found: list[Window] = []
    for start in range(0, len(marks) - 1, size):
        end = min(start + size, len(marks) - 1)
        (n0, ns0, st0, s0, c0, _), (n1, ns1, st1, s1, c1, rss) = marks[start], marks[end]
        count = n1 - n0
        per, cpu = (ns1 - ns0) / 1000 / count, (c1 - c0) / 1000 / count
        wall = (s1 - s0) * 1e6 / count
        found.append(Window(n0 + 1, n1, per, wall, (st1 - st0) / count, cpu, rss))
    return found


def peak_rss_mb() -> float:
    """This process's peak resident memory so far (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def flatness(found: list[Window]) -> tuple[float, float, float]:
    """Last window over first: the journal's time, the wall time, the journal's CPU (1.0 is flat).

    A partial last window is left out: it averages fewer iterations than the first.
    """
    whole = [w for w in found if w.last - w.first + 1 == found[0].last - found[0].first + 1]
    first, last = whole[0], whole[-1]
    cpu = last.journal_cpu_us / first.journal_cpu_us if first.journal_cpu_us else 0.0
    return last.journal_us / first.journal_us, last.wall_us / first.wall_us, cpu


@contextmanager
def _timed_journal(target: str) -> Iterator[tuple[Journal, TimedConnection]]:
    db = JournalDb.open(target, utc_now)
    timed = TimedConnection(db.conn)
    db.conn = timed  # ``postgres`` was decided from the real connection already
    journal = Journal(db)
    try:
        yield journal, timed
    finally:
        journal.close()


async def _run(
    journal: Journal, timed: TimedConnection, iterations: int, live: bool
) -> list[Window]:
    def now(number: int) -> Mark:
        clock = time.perf_counter()
        return number, timed.spent_ns, timed.statements, clock, timed.cpu_ns, peak_rss_mb()

    marks = [now(0)]  # one per window boundary: the bench itself stays flat in memory

    def mark(result: IterationResult) -> None:
        if result.iteration % WINDOW and result.iteration != iterations:
            return
        marks.append(now(result.iteration))
        if live:  # a window just closed: show it as it comes
            print(_window_line(windows(marks[-2:], size=1)[0]), flush=True)

    request = recipe_request(FAKE_BASE_URL, iterations)
    outcome = await execute_run(request, host=_InstantHost(), journal=journal, on_result=mark)
    if outcome.status != "verified":
        raise BenchFailed(f"the long run ended {outcome.status}: {outcome.error}")
    return windows(marks, size=1)


def measure(target: str, iterations: int, *, live: bool = False) -> LongRun:
    """Run ``iterations`` on the fake browser into the journal at ``target``; its windows.

    ``live`` prints each window as soon as it closes (a long Postgres run takes an hour).
    """
    with _timed_journal(target) as (journal, timed):
        location = journal.location
        found = asyncio.run(_run(journal, timed, iterations, live))
    return LongRun(location, iterations, found, *flatness(found))


_HEADING = (
    f"{'iterations':>17}  {'journal µs/it':>13}  {'journal CPU µs/it':>17}  "
    f"{'wall µs/it':>10}  {'stmts/it':>8}  {'peak RSS MB':>11}"
)


def _window_line(w: Window) -> str:
    line = f"{w.first:>8}-{w.last:<8}  {w.journal_us:>13.1f}  {w.journal_cpu_us:>17.1f}"
    return f"{line}  {w.wall_us:>10.1f}  {w.statements:>8.1f}  {w.peak_rss_mb:>11.1f}"


def _report(result: LongRun) -> None:
    print(f"journal {result.journal}: {result.iterations} iterations on the fake browser")
    print(_HEADING)
    for w in result.windows:
        print(_window_line(w))
    first, last = result.windows[0], result.windows[-1]
    print(f"journal per iteration: first {first.journal_us:.1f} µs, last {last.journal_us:.1f} µs")
    print(f"journal CPU per iteration: first {first.journal_cpu_us:.1f} µs, "
          f"last {last.journal_cpu_us:.1f} µs")  # fmt: skip
    print(f"last/first: journal {result.journal_ratio:.3f}, journal CPU {result.cpu_ratio:.3f}, "
          f"wall {result.wall_ratio:.3f}")  # fmt: skip
    spread = statistics.pstdev(w.journal_us for w in result.windows)
    print(f"journal µs/it across windows: sd {spread:.1f}")
    print(f"peak RSS: first window {first.peak_rss_mb:.1f} MB, last {last.peak_rss_mb:.1f} MB")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m northstar.bench.long_run")
    parser.add_argument("--iterations", type=int, default=100_000, help="(default 100000)")
    parser.add_argument("--journal", default=None, help="a postgresql:// URL (empty database)")
    parser.add_argument("--postgres", action="store_true", help="start a throwaway Postgres")
    parser.add_argument("--dir", default=None, help="folder for the temporary SQLite journal")
    parser.add_argument("--json", default=None, help="also write the windows to this file")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    configure_logging()  # warnings only: the run is measured, not narrated
    with ExitStack() as stack:
        target = args.journal or _scratch_target(stack, args)
        print(_HEADING, flush=True)
        result = measure(target, args.iterations, live=True)
    _report(result)
    if args.json:
        Path(args.json).write_text(json.dumps(asdict(result), indent=2), encoding="utf-8")
    return 0


def _scratch_target(stack: ExitStack, args: argparse.Namespace) -> str:
    if args.postgres:
        from fixtures.postgres_server import PostgresServer

        server = stack.enter_context(PostgresServer())
        return server.create_database("long_run")
    folder = stack.enter_context(tempfile.TemporaryDirectory(dir=args.dir))
    return str(Path(folder) / "journal.db")


if __name__ == "__main__":
    raise SystemExit(main())
