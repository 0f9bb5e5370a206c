"""Throughput of distributed runs: ``python -m northstar.bench.distributed [--iterations 40]``

Runs ``recipes/publish-post.yaml`` (one post per row, the recipe the distributed tests use)
against the fixture site three ways, each with fresh titles:

- ``sqlite``: ``northstar run`` on an SQLite journal, one lane (the embedded default);
- ``postgres-1``: ``run --queue`` served by one ``northstar worker`` process;
- ``postgres-2``: the same served by two worker processes.

Each worker has ``--lanes`` lanes (default 1), so the rows compare 1 lane with 1 and 2
worker processes. Iterations per second are taken two ways: over the command's wall time
(process start, browser launch and the queue included), and over the span the journal
records from the first iteration's start to the last one's end (steady state).

Then ``--check N`` (default 200; 0 skips it) queues one run of N iterations on two workers
and checks it on the server and in the journal: exactly N posts, each title once; N
iterations, all verified, each submission in flight and dispatched once; iterations
claimed by both workers. It exits 1 if any check fails.

It needs a checkout (``fixtures/``) and Postgres' ``initdb`` (``scripts/setup.sh``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from northstar import readers
from northstar.bench._workload import REPO, BenchFailed

if TYPE_CHECKING:
    from fixtures.postgres_server import PostgresServer
    from fixtures.site_server import FixtureSite
    from fixtures.worker_processes import Worker

__all__ = ["Throughput", "batch_problems", "main"]

RECIPE = REPO / "recipes" / "publish-post.yaml"
QUEUE = "bench"


@dataclass(frozen=True, slots=True)
class Throughput:
    """One measured run: iterations, wall seconds, and the journal's first-to-last span."""

    mode: str
    iterations: int
    wall_s: float
    span_s: float

    @property
    def wall_rate(self) -> float:
        return self.iterations / self.wall_s

    @property
    def span_rate(self) -> float:
        return self.iterations / self.span_s


@dataclass
class _Bench:
    pg: PostgresServer
    site: FixtureSite
    folder: Path
    lanes: int
    runs: int = 0

    def rows(self, mode: str, count: int) -> tuple[Path, list[str]]:
        from fixtures.worker_processes import write_rows

        self.runs += 1
        titles = [f"Bench {self.runs} {mode} {n}" for n in range(1, count + 1)]
        return write_rows(self.folder / f"rows-{self.runs}.jsonl", titles), titles


def _span_s(detail: readers.RunDetail) -> float:
    starts = [datetime.fromisoformat(i.started_at) for i in detail.iterations if i.started_at]
    ends = [datetime.fromisoformat(i.ended_at) for i in detail.iterations if i.ended_at]
    return (max(ends) - min(starts)).total_seconds()


def _run(bench: _Bench, journal: str, rows: Path, *queued: str) -> tuple[str, float]:
    """``northstar run`` of publish-post; its run id and wall seconds."""
    from fixtures.worker_processes import northstar

    args = ("--base-url", bench.site.base_url, "--params-file", str(rows), "--journal", journal)
    began = time.perf_counter()
    proc = northstar("run", str(RECIPE), *args, *queued, cwd=bench.folder, timeout=3600)
    wall = time.perf_counter() - began
    if proc.returncode != 0:
        raise BenchFailed(f"run {' '.join(queued) or 'sqlite'} failed: {proc.stderr[-2000:]}")
    found = readers.list_runs(journal, 1)
    return found[0].run_id, wall


@contextmanager
def _workers(bench: _Bench, url: str, count: int) -> Iterator[list[Worker]]:
    from fixtures.worker_processes import Worker

    started: list[Worker] = []
    try:
        for n in range(1, count + 1):
            name = f"b{bench.runs}w{n}"
            started.append(Worker(url, QUEUE, name, cwd=bench.folder, lanes=bench.lanes))
        for worker in started:
            worker.ready(120)
        yield started
    finally:
        for worker in started:
            worker.kill()


def _measure(bench: _Bench, mode: str, iterations: int) -> tuple[Throughput, readers.RunDetail]:
    bench.site.reset()
    rows, _titles = bench.rows(mode, iterations)
    if mode == "sqlite":
        journal = str(bench.folder / f"journal-{bench.runs}.db")
        run_id, wall = _run(bench, journal, rows)
    else:
        journal = bench.pg.create_database(f"bench_{bench.runs}")
        with _workers(bench, journal, int(mode[-1])):
            run_id, wall = _run(bench, journal, rows, "--queue", QUEUE)
    detail = readers.get_run(journal, run_id)
    return Throughput(mode, iterations, wall, _span_s(detail)), detail


def batch_problems(detail: readers.RunDetail, titles: list[str], received: list[str]) -> list[str]:
    """What is wrong with a finished distributed batch; empty when every check holds."""
    count = len(titles)
    problems = []
    if sorted(received) != sorted(titles):
        extra = sum(n - 1 for n in Counter(received).values() if n > 1)
        problems.append(f"the site received {len(received)} posts ({extra} repeated)")
    states = Counter(i.state for i in detail.iterations)
    if states != Counter({"verified": count}):
        problems.append(f"iteration states {dict(states)}")
    for event in ("in_flight", "dispatched"):
        sent = Counter(
            i.number for i in detail.iterations for s in i.steps for e, _ in s.events if e == event
        )
        if sent != Counter(range(1, count + 1)):
            problems.append(f"{event} was not recorded exactly once per iteration")
    if len(_claims(detail)) < 2:
        problems.append(f"iterations claimed by {dict(_claims(detail))}, not by both workers")
    return problems


def _claims(detail: readers.RunDetail) -> Counter[str]:
    return Counter(
        str(e.payload.get("worker")) for e in detail.events if e.name == "iteration_claimed"
    )


def _check_batch(bench: _Bench, count: int) -> list[str]:
    result, detail = _measure(bench, "postgres-2", count)
    titles = [f"Bench {bench.runs} postgres-2 {n}" for n in range(1, count + 1)]
    received = [s["title"] for s in bench.site.submissions()]
    problems = batch_problems(detail, titles, received)
    claims = ", ".join(f"{w}: {n}" for w, n in sorted(_claims(detail).items()))
    print(f"\ncheck: {count} iterations on 2 workers in {result.wall_s:.1f} s "
          f"({result.span_rate:.2f} it/s in the journal's span)")  # fmt: skip
    print(f"  site received {len(received)} posts, {len(set(received))} distinct titles")
    print(f"  iterations claimed per worker: {claims}")
    print("  all checks passed" if not problems else "  FAILED: " + "; ".join(problems))
    return problems


def _report(results: list[Throughput]) -> None:
    base = results[0]
    print(f"{'mode':<12} {'iterations':>10} {'wall s':>8} {'it/s wall':>9} "
          f"{'span s':>8} {'it/s span':>9} {'vs sqlite':>9}")  # fmt: skip
    for r in results:
        ratio = r.span_rate / base.span_rate
        print(f"{r.mode:<12} {r.iterations:>10} {r.wall_s:>8.1f} {r.wall_rate:>9.2f} "
              f"{r.span_s:>8.1f} {r.span_rate:>9.2f} {ratio:>8.2f}x")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m northstar.bench.distributed")
    parser.add_argument("--iterations", type=int, default=40, help="per mode (default 40)")
    parser.add_argument("--lanes", type=int, default=1, help="lanes per worker (default 1)")
    parser.add_argument("--check", type=int, default=200, help="two-worker batch (0: skip)")
    args = parser.parse_args(argv)
    from fixtures.postgres_server import PostgresServer
    from fixtures.site_server import FixtureSite

    with ExitStack() as stack:
        pg = stack.enter_context(PostgresServer())
        site = stack.enter_context(FixtureSite())
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ns-dist-")))
        bench = _Bench(pg, site, folder, args.lanes)
        modes = ("sqlite", "postgres-1", "postgres-2")
        _report([_measure(bench, mode, args.iterations)[0] for mode in modes])
        problems = _check_batch(bench, args.check) if args.check else []
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
