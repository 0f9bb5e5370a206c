"""A queued run resumed locally and a worker coming back send nothing twice, in either order.

Real ``northstar worker`` processes on the throwaway Postgres, the fixture site (which
counts what it really received) and headless Chromium. The run blocks when its only
worker, SIGKILLed after a post was sent, comes back under its name: DBOS recovers the
iteration and the journal calls it unknown. What happens after that is the test:

- the worker comes back first: it decides, the person reconciles and resumes locally;
- the local resume comes first: the worker comes back on the queue while the resume is
  running (held at a failpoint) and finds iterations of the run still queued; they are the
  resuming process's now (``claim_action(..., ours=False)``): it starts none of them.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from fixtures.worker_processes import Child, Worker, northstar, write_rows
from northstar import readers
from tests.conftest import RECIPES
from tests.distributed.test_workers import sent

pytestmark = pytest.mark.browser

RECIPE = str(RECIPES / "publish-post.yaml")
TITLES = 5


def queue_run(url: str, tmp: Path, site: FixtureSite, titles: list[str]) -> tuple[str, Path]:
    rows = write_rows(tmp / "rows.jsonl", titles)
    inputs = ("--base-url", site.base_url, "--params-file", str(rows), "--journal", url)
    queued = northstar("run", RECIPE, *inputs, "--queue", "posts", "--detach", cwd=tmp)
    assert queued.returncode == 0, queued.stderr
    return queued.stdout.strip(), rows


def killed_after_sending_two(url: str, tmp: Path, workers: list[Worker]) -> None:
    """The only worker, one lane, is SIGKILLed with post 2 sent and its outcome unknown."""
    armed = {"NORTHSTAR_FAILPOINT": "after_dispatch@2"}
    first = Worker(url, "posts", "q1", cwd=tmp, lanes=1, env=armed)
    workers.append(first)
    assert first.wait_for("failpoint after_dispatch 2"), first.lines
    first.kill()


def claims(worker: Child) -> dict[int, str]:
    """The worker's ``iteration_claimed`` log lines: iteration -> the action it chose."""
    events = [json.loads(line) for line in worker.lines if line.startswith("{")]
    return {e["iteration"]: e["action"] for e in events if e.get("event") == "iteration_claimed"}


def logging_worker(url: str, tmp: Path) -> Worker:
    """Worker ``q1`` (one lane) that logs each decision as a JSON line."""
    return Worker(url, "posts", "q1", cwd=tmp, lanes=1, logs=("--log-json", "--verbose"))


def still_queued(url: str, run_id: str) -> set[int]:
    """The run's iterations whose DBOS workflow has not finished (queued or left pending)."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT workflow_uuid FROM dbos.workflow_status "
            "WHERE workflow_uuid LIKE %s AND status IN ('ENQUEUED', 'PENDING')",
            (f"northstar/{run_id}/%",),
        ).fetchall()
    return {int(uuid.rsplit("/", 1)[1]) for (uuid,) in rows}


def test_a_worker_back_first_then_a_local_resume_send_each_post_once(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    url = postgres.create_database("back_then_resume")
    titles = [f"Back first {n}" for n in range(1, TITLES + 1)]
    run_id, rows = queue_run(url, tmp_path, site, titles)
    killed_after_sending_two(url, tmp_path, workers)

    back = Worker(url, "posts", "q1", cwd=tmp_path, lanes=1).ready()  # DBOS recovers it
    workers.append(back)
    watched = northstar("watch", run_id, "--journal", url, "--every", "0.2", cwd=tmp_path)
    assert watched.returncode == 4, watched.stdout  # blocked: post 2 is unknown
    same = ("--params-file", str(rows), "--journal", url)
    reconciled = northstar("reconcile", run_id, *same, cwd=tmp_path)
    assert reconciled.returncode == 0, reconciled.stderr + reconciled.stdout
    resumed = northstar("resume", run_id, *same, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout

    assert Counter(s["title"] for s in site.submissions()) == Counter(titles)
    final = readers.get_run(url, run_id)
    assert final.summary.status == "verified"
    assert sent(final) == Counter(range(1, TITLES + 1))
    assert still_queued(url, run_id) == set()  # nothing of the run waits for a worker


def test_a_local_resume_then_a_worker_back_on_the_queue_send_each_post_once(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    url = postgres.create_database("resume_then_back")
    titles = [f"Resumed first {n}" for n in range(1, TITLES + 1)]
    run_id, rows = queue_run(url, tmp_path, site, titles)
    killed_after_sending_two(url, tmp_path, workers)

    # It comes back only long enough to block the run: SIGTERM as soon as it decided.
    blocker = logging_worker(url, tmp_path)
    workers.append(blocker)
    assert blocker.wait_for('"action": "block"'), blocker.lines
    assert blocker.terminate() == 0, blocker.lines
    blocked = readers.get_run(url, run_id)
    assert blocked.summary.status == "blocked"
    recorded = {view.number for view in blocked.iterations}
    left = still_queued(url, run_id) - recorded  # never started, still on the queue
    assert left, "every iteration was decided before the worker stopped"

    same = ("--params-file", str(rows), "--journal", url)
    reconciled = northstar("reconcile", run_id, *same, cwd=tmp_path)
    assert reconciled.returncode == 0, reconciled.stderr + reconciled.stdout
    held = {"NORTHSTAR_FAILPOINT": f"before_in_flight@{min(left)}"}
    resume = Child("resume", run_id, *same, cwd=tmp_path, env=held)
    try:
        assert resume.wait_for(f"failpoint before_in_flight {min(left)}"), resume.lines
        back = logging_worker(url, tmp_path).ready()
        workers.append(back)
        for number in sorted(left):  # it finds each still on the queue, and starts none
            assert back.wait_for(f'"iteration": {number}'), (number, claims(back))
        assert {claims(back)[number] for number in left} == {"skip"}, claims(back)
        resume.release_failpoint()
        assert resume.process.wait(timeout=300) == 0, resume.lines
    finally:
        resume.kill()

    assert Counter(s["title"] for s in site.submissions()) == Counter(titles)  # 0 dup, 0 lost
    final = readers.get_run(url, run_id)
    assert final.summary.status == "verified"
    assert sent(final) == Counter(range(1, TITLES + 1))
    by_workers = {e.payload["iteration"] for e in final.events if e.name == "iteration_claimed"}
    assert not by_workers & left  # no worker ran any of them: the local resume did
