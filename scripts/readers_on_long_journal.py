"""How fast the readers start on a journal of N iterations, SQLite or Postgres.

    PYTHONPATH=. .venv/bin/python scripts/readers_on_long_journal.py [N] [--postgres]

A measurement, not a test. Fills a journal (a temporary SQLite file, or a database on a
throwaway Postgres cluster from ``fixtures/postgres_server.py``) with one run of N
iterations (default 100,000) by the bulk inserts of ``tests/readers/test_bounded.py``,
then runs ``northstar show``, ``report``, ``watch`` and ``runs`` on it twice each as child
processes and prints, per command, the seconds to its first line on stdout, to its end,
and its peak RSS (``wait4``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from fixtures.postgres_server import PostgresServer
from northstar.journal import Journal
from tests.readers.test_bounded import _fill, create_long_run

COMMANDS = ("show", "report", "watch", "runs")


@contextlib.contextmanager
def _journal_url(postgres: bool, folder: Path) -> Iterator[str]:
    if not postgres:
        yield str(folder / "journal.db")
        return
    with PostgresServer() as server:
        yield server.create_database("readers")


def _filled(url: str, iterations: int) -> str:
    with Journal.open(url) as journal:
        run_id = create_long_run(journal, iterations)
        for low in range(1, iterations + 1, 10_000):
            _fill(journal, run_id, range(low, min(low + 10_000, iterations + 1)))
        journal.finish_run(run_id, "verified")
    return run_id


def _timed(command: list[str]) -> tuple[float, float, float, int]:
    """Seconds to the first stdout line and to the end, peak RSS in MB, lines printed."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert child.stdout is not None
    child.stdout.readline()
    first = time.perf_counter() - start
    lines = 1 + len(child.stdout.read().splitlines())
    _, _, usage = os.wait4(child.pid, 0)
    return first, time.perf_counter() - start, usage.ru_maxrss / 1024, lines


def main(iterations: int, postgres: bool) -> None:
    northstar = str(Path(sys.executable).with_name("northstar"))
    with tempfile.TemporaryDirectory() as folder, _journal_url(postgres, Path(folder)) as url:
        started = time.perf_counter()
        run_id = _filled(url, iterations)
        print(f"filled {iterations:,} iterations in {time.perf_counter() - started:.1f} s")
        for name in COMMANDS:
            args = [] if name == "runs" else [run_id]
            out = ["--out", str(Path(folder) / "report.html")] if name == "report" else []
            for _ in range(2):
                first, whole, rss, lines = _timed([northstar, name, *args, "--journal", url, *out])
                print(
                    f"{name:7s} first line {first:5.2f} s  whole {whole:5.2f} s"
                    f"  peak RSS {rss:4.0f} MB  {lines} lines"
                )


if __name__ == "__main__":
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    main(int(numbers[0]) if numbers else 100_000, "--postgres" in sys.argv[1:])
