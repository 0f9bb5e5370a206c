"""Kill trials of distributed runs: SIGKILL a worker mid-iteration, recover, count the posts.

    .venv/bin/python scripts/kill_trials_distributed.py [--trials 20] [--iterations 4]
        [--random SEED]

Each trial starts a throwaway Postgres database, the fixture site and two
``northstar worker`` processes (2 lanes each), both armed with one failpoint
(``before_in_flight``, ``after_in_flight`` or ``after_dispatch``, in turn, at a
rotating iteration). It queues a run of ``recipes/publish-post.yaml`` (with ``settle: 0``,
so reconcile decides at once), SIGKILLs the worker
that pauses at the failpoint, restarts it under the same name (DBOS recovers its
workflows; the journal decides whether to run them again or call them unknown), waits for
the run to end, reconciles and resumes it when it is blocked or unfinished, and counts what
the site received: every title must be there exactly once. One line per trial, then a
summary; exit 1 if any trial lost or repeated a post.

With ``--random SEED`` no failpoint is armed: each trial SIGKILLs one of the two workers
(chosen at random) at a random moment 0.3-3 s after the run is queued (the trial line says
when the run had already ended by then; use ``--iterations 12`` or more), and does not
restart it: the survivor takes its unfinished iterations over (``--takeover-every 1``).
The wait before the kill is the one deliberate timer here: a random moment is the point.

With ``--restart-postgres SECONDS`` nothing is killed: each trial stops Postgres
(``pg_ctl -m fast``, which ends every session) once the site has received
``1 + trial % (iterations - 1)`` posts, keeps it down for SECONDS (the outage's length is
the point), starts it again, and lets the two workers (default bounds: back-off capped at
30 s) reconnect and finish; then reconciles and resumes if needed and counts as above. The
trial line adds how many lines each worker wrote from the stop until it logged
``database_reachable``, and the seconds from the restart to its reconnection.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixtures.postgres_server import PostgresServer
from fixtures.site_server import FixtureSite
from fixtures.worker_processes import Worker, northstar, write_rows
from northstar import readers
from northstar.run.failpoints import POINTS

RECIPE = Path(__file__).resolve().parent.parent / "recipes" / "publish-post.yaml"


def recipe_without_settling(folder: Path) -> str:
    """publish-post with ``settle: 0``: reconcile may call a post absent at once."""
    text = RECIPE.read_text(encoding="utf-8")
    text = text.replace("    effect: submit\n", "    effect: submit\n    settle: 0\n", 1)
    path = folder / "publish-post.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def first_to_say(needle: str, among: list[Worker], timeout: float = 120) -> Worker | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for worker in among:
            if worker.wait_for(needle, timeout=0.2):
                return worker
    return None


def until_settled(url: str, run_id: str, timeout: float = 120) -> str:
    """The run's status once no iteration is running (or at the deadline).

    ``watch`` may end early on a distributed run: it reads a dead worker's iteration as
    interrupted while a survivor is taking it over. The trial must not reconcile, resume or
    stop the workers before they are done, so it polls the journal itself.
    """
    deadline = time.monotonic() + timeout
    status = readers.get_run(url, run_id).summary.status
    while status == "running" and time.monotonic() < deadline:
        time.sleep(0.5)  # polling the journal of processes this script does not own
        status = readers.get_run(url, run_id).summary.status
    return status


def diagnosis(url: str, run_id: str, workers: list[Worker]) -> str:
    """What the journal and DBOS say about a run that did not end, for the trial's line."""
    import psycopg

    detail = readers.get_run(url, run_id)
    with psycopg.connect(url) as conn:
        flows = conn.execute(
            "SELECT workflow_uuid, status, executor_id FROM dbos.workflow_status ORDER BY 1"
        ).fetchall()
    states = [(v.number, v.state, v.reason_code) for v in detail.iterations]
    return f"iterations={states} workflows={flows} workers={[w.lines for w in workers]}"


def queue_run(site: FixtureSite, url: str, folder: Path, recipe: str, rows: Path) -> str:
    same = ("--params-file", str(rows), "--journal", url)
    queued = northstar("run", recipe, "--base-url", site.base_url, *same, "--queue", "posts",
                       "--detach", cwd=folder)  # fmt: skip
    return queued.stdout.strip()


def settle(url: str, run_id: str, rows: Path, folder: Path) -> list[str]:
    """The run's statuses: as it ended, then after a reconcile and a resume when needed."""
    same = ("--params-file", str(rows), "--journal", url)
    steps = [until_settled(url, run_id)]
    if steps[-1] == "blocked":
        northstar("reconcile", run_id, *same, cwd=folder)
        steps.append(readers.get_run(url, run_id).summary.status)
    if steps[-1] != "verified":
        northstar("resume", run_id, *same, cwd=folder)
        steps.append(readers.get_run(url, run_id).summary.status)
    return steps


def counted(site: FixtureSite, titles: list[str]) -> dict[str, int]:
    received = Counter(s["title"] for s in site.submissions())
    return {
        "duplicates": sum(count - 1 for count in received.values() if count > 1),
        "missing": sum(1 for title in titles if received[title] == 0),
    }


def trial(
    number: int,
    iterations: int,
    pg: PostgresServer,
    site: FixtureSite,
    rng: random.Random | None = None,
) -> dict[str, object]:
    site.reset()
    point, at = POINTS[number % len(POINTS)], 1 + number % iterations
    killed_at = f"{point}@{at}"
    url = pg.create_database(f"trial_{number}")
    folder = Path(tempfile.mkdtemp(prefix="northstar-kill-"))
    titles = [f"Trial {number} post {n}" for n in range(1, iterations + 1)]
    rows = write_rows(folder / "rows.jsonl", titles)
    recipe = recipe_without_settling(folder)
    armed = {} if rng else {"NORTHSTAR_FAILPOINT": f"{point}@{at}"}
    every = 1.0 if rng else None
    workers = [
        Worker(url, "posts", f"t{number}w{n}", cwd=folder, env=armed, takeover_every=every)
        for n in (1, 2)
    ]
    try:
        for worker in workers:
            worker.ready(120)
        run_id = queue_run(site, url, folder, recipe, rows)
        paused: Worker | None
        if rng is not None:
            paused, delay = rng.choice(workers), rng.uniform(0.3, 3.0)
            time.sleep(delay)  # the random moment (see the module docstring)
            live = readers.get_run(url, run_id).summary.status == "running"
            paused.kill()  # not restarted: the other worker takes its work over
            killed_at = f"random@{delay:.1f}s" + ("" if live else "(after the run ended)")
        else:
            paused = first_to_say(f"failpoint {point} {at}", workers)
        if paused is not None and rng is None:
            paused.kill()
            for other in workers:  # DBOS may queue the killed worker's iteration for another
                other.release_failpoint()  # armed worker: let it pass the point, not freeze
            workers.append(Worker(url, "posts", paused.name, cwd=folder).ready(120))
        try:
            northstar("watch", run_id, "--journal", url, "--every", "0.2", cwd=folder, timeout=240)
        except subprocess.TimeoutExpired:
            print(f"trial {number}: the run did not end; {diagnosis(url, run_id, workers)}")
        steps = settle(url, run_id, rows, folder)
    finally:
        for worker in workers:
            worker.kill()
    return {
        "trial": number,
        "killed_at": killed_at,
        "killed": paused is not None,
        "statuses": " -> ".join(steps),
        **counted(site, titles),
    }


def restart_trial(
    number: int, iterations: int, pg: PostgresServer, site: FixtureSite, down_s: float
) -> dict[str, object]:
    site.reset()
    url = pg.create_database(f"restart_{number}")
    folder = Path(tempfile.mkdtemp(prefix="northstar-restart-"))
    titles = [f"Restart {number} post {n}" for n in range(1, iterations + 1)]
    rows = write_rows(folder / "rows.jsonl", titles)
    recipe = recipe_without_settling(folder)
    workers = [Worker(url, "posts", f"r{number}w{n}", cwd=folder) for n in (1, 2)]
    posted_before = 1 + number % (iterations - 1)
    try:
        for worker in workers:
            worker.ready(120)
        run_id = queue_run(site, url, folder, recipe, rows)
        while site.submission_count() < posted_before:
            time.sleep(0.05)  # the site is in this process; a trial picks a moment by its count
        marks = [len(worker.lines) for worker in workers]
        pg.halt()
        time.sleep(down_s)  # the outage (see the module docstring)
        pg.resume()
        restarted = time.monotonic()
        back = []
        for worker in workers:
            worker.wait_for("database_reachable", 120)
            back.append(round(time.monotonic() - restarted, 1))
        lines = [len(worker.lines) - mark for worker, mark in zip(workers, marks, strict=True)]
        northstar("watch", run_id, "--journal", url, "--every", "0.2", cwd=folder, timeout=240)
        steps = settle(url, run_id, rows, folder)
        alive = sum(1 for worker in workers if worker.process.poll() is None)
    finally:
        for worker in workers:
            worker.kill()
    return {
        "trial": number,
        "down_after_posts": posted_before,
        "statuses": " -> ".join(steps),
        "workers_alive": alive,
        "outage_lines": lines,
        "reconnected_after_s": back,
        **counted(site, titles),
        "killed": False,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/kill_trials_distributed.py")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--first", type=int, default=0, help="number of the first trial")
    parser.add_argument("--random", type=int, metavar="SEED", help="kill at random moments")
    parser.add_argument(
        "--restart-postgres",
        type=float,
        metavar="SECONDS",
        help="stop Postgres for SECONDS mid-batch instead of killing a worker",
    )
    args = parser.parse_args(argv)
    rng = None if args.random is None else random.Random(args.random)
    results = []
    with PostgresServer() as pg, FixtureSite() as site:
        for number in range(args.first, args.first + args.trials):
            began = time.monotonic()
            if args.restart_postgres is not None:
                down = args.restart_postgres
                result = restart_trial(number, args.iterations, pg, site, down)
            else:
                result = trial(number, args.iterations, pg, site, rng)
            result["seconds"] = round(time.monotonic() - began, 1)
            results.append(result)
            print(" ".join(f"{k}={v}" for k, v in result.items()), flush=True)
    duplicates = sum(int(str(r["duplicates"])) for r in results)
    missing = sum(int(str(r["missing"])) for r in results)
    killed = sum(1 for r in results if r["killed"])
    print(f"trials={len(results)} killed={killed} duplicates={duplicates} missing={missing}")
    return 0 if duplicates == missing == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
