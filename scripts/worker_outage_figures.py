"""Figures for workers whose Postgres goes away, and for workers sharing one Postgres.

    PYTHONPATH=. .venv/bin/python scripts/worker_outage_figures.py sigterm [--runs 5]
    PYTHONPATH=. .venv/bin/python scripts/worker_outage_figures.py quiet [--minutes 10]
    PYTHONPATH=. .venv/bin/python scripts/worker_outage_figures.py fleet [--workers 3] [--lanes 2]
    PYTHONPATH=. .venv/bin/python scripts/worker_outage_figures.py frozen

Measurements, not tests; each uses a throwaway cluster (``fixtures/postgres_server.py``)
and real ``northstar worker`` processes with their default bounds unless told otherwise.

- ``sigterm``: a worker serving an empty queue; Postgres is stopped (``pg_ctl -m fast``);
  once the worker has logged ``database_unreachable`` it gets SIGTERM. Prints the seconds
  from SIGTERM to its exit, and the exit code, per run, then the median.
- ``quiet``: the same worker with Postgres stopped for ``--minutes``; prints the lines it
  wrote in each minute (``--give-up-after`` is set past the outage).
- ``fleet``: ``--workers`` workers with ``--lanes`` lanes each on one database; prints the
  sessions each holds (by ``application_name``: DBOS's engine, its client, and Northstar's
  journal and liveness connections, which set none), its advisory locks, and the
  transactions per second the server commits for them, idle and while they serve a run of
  ``workers x lanes x 3`` iterations on the fixture site.

- ``frozen``: Postgres frozen (SIGSTOP to its processes: it accepts nothing and answers
  nothing) under two workers, one idle and one whose lane is writing its journal (a post
  held by the site until the freeze); both get SIGTERM; prints each one's seconds to exit
  and exit code.

The waits are for the workers' own lines and exits, except the sampling windows of
``quiet`` and ``fleet``, which are the point of those measurements.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixtures.postgres_server import PostgresServer
from fixtures.site_server import FixtureSite
from fixtures.worker_processes import Worker, northstar, write_rows

RECIPE = Path(__file__).resolve().parent.parent / "recipes" / "publish-post.yaml"
NEVER = "\x00never printed\x00"


def sigterm(runs: int) -> None:
    timings: list[float] = []
    with PostgresServer() as pg:
        for run in range(1, runs + 1):
            url = pg.create_database(f"sigterm_{run}")
            folder = Path(tempfile.mkdtemp(prefix="northstar-sigterm-"))
            worker = Worker(url, "posts", f"sig{run}", cwd=folder, lanes=2).ready(120)
            try:
                pg.halt()
                assert worker.wait_for("database_unreachable", 60), worker.lines
                began = time.monotonic()
                worker.process.terminate()
                code = worker.process.wait(timeout=120)
                seconds = time.monotonic() - began
            finally:
                worker.kill()
                pg.resume()
            timings.append(seconds)
            print(f"run={run} exit={code} sigterm_to_exit_s={seconds:.2f}", flush=True)
    print(f"runs={runs} median_s={statistics.median(timings):.2f} max_s={max(timings):.2f}")


def quiet(minutes: int) -> None:
    with PostgresServer() as pg:
        url = pg.create_database("quiet")
        folder = Path(tempfile.mkdtemp(prefix="northstar-quiet-"))
        bound = ("--give-up-after", str(minutes * 60 + 300))
        worker = Worker(url, "posts", "quiet", cwd=folder, lanes=2, options=bound).ready(120)
        try:
            start = len(worker.lines)
            pg.halt()
            per_minute = []
            for _ in range(minutes):
                mark = len(worker.lines)
                worker.wait_for(NEVER, 60)  # reads whatever it writes for one minute
                per_minute.append(len(worker.lines) - mark)
                print(f"minute={len(per_minute)} lines={per_minute[-1]}", flush=True)
            pg.resume()
            assert worker.wait_for("database_reachable", 120), worker.lines
            print(*worker.lines[start:], sep="\n")
            total = len(worker.lines) - start
            print(f"minutes={minutes} lines_while_down={sum(per_minute)} with_reachable={total}")
        finally:
            worker.kill()


SESSIONS = """
SELECT coalesce(nullif(application_name, ''), 'northstar') AS who, count(*)
FROM pg_stat_activity WHERE datname = %s GROUP BY 1 ORDER BY 1
"""
LOCKS = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
COMMITS = "SELECT xact_commit FROM pg_stat_database WHERE datname = %s"


def sample(url: str, database: str, seconds: float) -> tuple[Counter[str], int, float]:
    """Sessions by kind, advisory locks held, commits per second over ``seconds``."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        before = conn.execute(COMMITS, (database,)).fetchone()[0]
        time.sleep(seconds)  # the sampling window
        after = conn.execute(COMMITS, (database,)).fetchone()[0]
        sessions = Counter(dict(conn.execute(SESSIONS, (database,)).fetchall()))
        sessions["northstar"] -= 1  # this sampling connection
        locks = conn.execute(LOCKS).fetchone()[0]
    return sessions, locks, (after - before - 2) / seconds


def fleet(workers: int, lanes: int, seconds: float, poll_every: float) -> None:
    with PostgresServer() as pg, FixtureSite() as site:
        url = pg.create_database("fleet")
        folder = Path(tempfile.mkdtemp(prefix="northstar-fleet-"))
        options = ("--poll-every", str(poll_every))
        fleet = [
            Worker(url, "posts", f"f{n}", cwd=folder, lanes=lanes, options=options)
            for n in range(1, workers + 1)
        ]
        try:
            for worker in fleet:
                worker.ready(120)
            report("idle", *sample(url, "fleet", seconds), workers)
            titles = [f"Fleet {n}" for n in range(workers * lanes * 3)]
            rows = write_rows(folder / "rows.jsonl", titles)
            inputs = ("--base-url", site.base_url, "--params-file", str(rows), "--journal", url)
            queued = northstar("run", str(RECIPE), *inputs, "--queue", "posts", "--detach",
                               cwd=folder)  # fmt: skip
            assert queued.returncode == 0, queued.stderr
            report("serving", *sample(url, "fleet", seconds / 2), workers)
        finally:
            for worker in fleet:
                worker.kill()


def report(when: str, sessions: Counter[str], locks: int, commits: float, workers: int) -> None:
    kinds = " ".join(f"{who}={count}" for who, count in sorted(sessions.items()))
    total = sum(sessions.values())
    print(
        f"{when}: workers={workers} sessions={total} ({kinds}) per_worker={total / workers:.1f} "
        f"advisory_locks={locks} commits_per_s={commits:.1f} "
        f"per_worker_per_s={commits / workers:.1f}",
        flush=True,
    )


def postgres_pids(pg: PostgresServer) -> list[int]:
    """The postmaster and its children (sessions, background processes)."""
    import subprocess

    head = int((pg.folder / "data" / "postmaster.pid").read_text().split()[0])
    children = subprocess.run(["pgrep", "-P", str(head)], capture_output=True, text=True)
    return [head, *map(int, children.stdout.split())]


def frozen() -> None:
    import os
    import signal

    with PostgresServer() as pg, FixtureSite() as site:
        url = pg.create_database("frozen")
        folder = Path(tempfile.mkdtemp(prefix="northstar-frozen-"))
        idle = Worker(url, "idle-queue", "idle", cwd=folder, lanes=1).ready(120)
        busy = Worker(url, "posts", "busy", cwd=folder, lanes=1).ready(120)
        rows = write_rows(folder / "rows.jsonl", ["Frozen 1"])
        inputs = ("--base-url", site.base_url, "--params-file", str(rows), "--journal", url)
        site.hold("/posts")
        queued = northstar("run", str(RECIPE), *inputs, "--queue", "posts", "--detach",
                           cwd=folder)  # fmt: skip
        assert queued.returncode == 0, queued.stderr
        site.wait_held(timeout_s=120)
        pids = postgres_pids(pg)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            site.release_held(save=True)  # the lane goes on to journal the post: it hangs
            began = time.monotonic()
            for worker in (idle, busy):
                worker.process.terminate()
            for worker in (idle, busy):
                code = worker.process.wait(timeout=120)
                seconds = time.monotonic() - began
                print(f"{worker.name}: exit={code} sigterm_to_exit_s={seconds:.2f}", flush=True)
                worker.wait_for(NEVER, 1)
                print(*(f"  {line}" for line in worker.lines[-3:]), sep="\n")
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
            for worker in (idle, busy):
                worker.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/worker_outage_figures.py")
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("sigterm").add_argument("--runs", type=int, default=5)
    sub.add_parser("quiet").add_argument("--minutes", type=int, default=10)
    fleet_args = sub.add_parser("fleet")
    fleet_args.add_argument("--workers", type=int, default=3)
    fleet_args.add_argument("--lanes", type=int, default=2)
    fleet_args.add_argument("--seconds", type=float, default=30)
    fleet_args.add_argument("--poll-every", type=float, default=0.2)
    sub.add_parser("frozen")
    args = parser.parse_args(argv)
    if args.what == "frozen":
        frozen()
    elif args.what == "sigterm":
        sigterm(args.runs)
    elif args.what == "quiet":
        quiet(args.minutes)
    else:
        fleet(args.workers, args.lanes, args.seconds, args.poll_every)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
