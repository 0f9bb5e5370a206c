"""Two ``northstar worker`` processes on one Postgres serve a queued run in real browsers.

The fixture site runs in this process and counts what it really received; the workers and
the ``run --queue`` command are child processes, waited on by their output lines.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from fixtures.worker_processes import EVENT_S, Worker, northstar, write_rows
from northstar import readers
from tests.conftest import RECIPES

pytestmark = pytest.mark.browser

RECIPE = str(RECIPES / "publish-post.yaml")


def run_id_of(output: str) -> str:
    found = re.search(r"run (r-[0-9a-f]{12})", output)
    assert found is not None, output
    return found[1]


def sent(detail: readers.RunDetail, event: str = "in_flight") -> Counter[int]:
    """How often each iteration's submission went in flight (or ``event``), from the journal."""
    return Counter(
        view.number
        for view in detail.iterations
        for step in view.steps
        for name, _ in step.events
        if name == event
    )


def first_to_say(needle: str, among: list[Worker], timeout: float = EVENT_S) -> Worker:
    """The worker that prints ``needle`` first (each is read in short turns)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for worker in among:
            if worker.wait_for(needle, timeout=0.2):
                return worker
    raise AssertionError(f"no worker said {needle!r}: {[w.lines for w in among]}")


def claimed_by(detail: readers.RunDetail) -> set[str]:
    return {e.payload["worker"] for e in detail.events if e.name == "iteration_claimed"}


def test_two_workers_serve_a_queued_run_each_iteration_verified_once(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    url = postgres.create_database("two_workers")
    titles = [f"Queued {n}" for n in range(1, 11)]
    rows = write_rows(tmp_path / "rows.jsonl", titles)
    workers += [Worker(url, "posts", f"w{n}", cwd=tmp_path) for n in (1, 2)]
    for worker in workers:
        worker.ready()
    args = ("--base-url", site.base_url, "--params-file", str(rows))
    proc = northstar("run", RECIPE, *args, "--journal", url, "--queue", "posts", cwd=tmp_path)

    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert sorted(s["title"] for s in site.submissions()) == sorted(titles)  # exactly N
    detail = readers.get_run(url, run_id_of(proc.stderr))
    assert detail.summary.status == "verified"
    assert [v.state for v in detail.iterations] == ["verified"] * 10
    assert sent(detail) == sent(detail, "dispatched") == Counter(range(1, 11))  # once each
    assert claimed_by(detail) == {"w1", "w2"}  # the lanes spread over both workers
    assert proc.stderr.count(": verified") == 10  # progress, one line per iteration
    for worker in workers:  # SIGTERM: a worker with nothing in progress drains and exits 0
        assert worker.terminate() == 0
        assert worker.wait_for("worker stopped")


def unfinished_of(detail: readers.RunDetail, worker: str) -> set[int]:
    """The iterations ``worker`` claimed that the journal does not record settled."""
    claimed = {
        e.payload["iteration"]
        for e in detail.events
        if e.name == "iteration_claimed" and e.payload["worker"] == worker
    }
    return {v.number for v in detail.iterations if v.number in claimed and v.state == "running"}


def test_a_worker_killed_after_dispatch_is_recovered_without_sending_again(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    """One lane per worker: the killed one holds exactly the iteration paused after its
    post was sent. With two lanes it may also hold another iteration whose post is in
    flight and has not reached the site when the process dies; that one is honestly
    unknown and cannot be proven absent before its settle period (the test below), so
    the run could not be reconciled at once."""
    url = postgres.create_database("killed_worker")
    titles = [f"Killed {n}" for n in range(1, 5)]
    rows = write_rows(tmp_path / "rows.jsonl", titles)
    armed = {"NORTHSTAR_FAILPOINT": "after_dispatch@3"}  # whoever takes iteration 3 pauses
    patient = ("--stop-deadline", "120")  # SIGTERM below: the step in progress finishes
    workers += [
        Worker(url, "posts", f"k{n}", cwd=tmp_path, lanes=1, env=armed, options=patient)
        for n in (1, 2)
    ]
    for worker in workers:
        worker.ready()
    inputs = ("--base-url", site.base_url, "--params-file", str(rows), "--journal", url)
    queued = northstar("run", RECIPE, *inputs, "--queue", "posts", "--detach", cwd=tmp_path)
    assert queued.returncode == 0, queued.stderr
    run_id = queued.stdout.strip()

    paused = first_to_say("failpoint after_dispatch 3", workers)
    paused.kill()  # SIGKILL with the post sent and its outcome not recorded
    assert unfinished_of(readers.get_run(url, run_id), paused.name) == {3}  # and nothing else
    restarted = Worker(url, "posts", paused.name, cwd=tmp_path, options=patient).ready()
    workers.append(restarted)  # DBOS recovers it (unless the survivor took it over first)
    watched = northstar("watch", run_id, "--journal", url, "--every", "0.2", cwd=tmp_path)
    assert watched.returncode == 4  # it ended blocked: reconcile before anything
    # The run is blocked, but a survivor may still be in an iteration it began before:
    # stopped, each worker finishes its step and journals it, so none is left running
    # (one queued iteration a worker takes while it stops is left unstarted: exit 130).
    for worker in workers:
        if worker is not paused:
            assert worker.terminate() in (0, 130), worker.lines
    blocked = readers.get_run(url, run_id)
    assert blocked.summary.status == "blocked"
    assert not [v.number for v in blocked.iterations if v.state in ("pending", "running")]
    three = next(v for v in blocked.iterations if v.number == 3)
    assert (three.state, three.reason_code) == ("unknown", "OUTCOME_UNKNOWN")

    same = ("--params-file", str(rows), "--journal", url)
    reconciled = northstar("reconcile", run_id, *same, cwd=tmp_path)
    assert reconciled.returncode == 0, reconciled.stderr + reconciled.stdout
    resumed = northstar("resume", run_id, *same, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout

    received = Counter(s["title"] for s in site.submissions())
    assert received == Counter(titles)  # 0 duplicates, 0 missing
    final = readers.get_run(url, run_id)
    assert final.summary.status == "verified"
    assert sent(final) == Counter(range(1, 5))  # in flight once each, never sent again


def test_a_worker_killed_before_its_post_left_leaves_it_unknown_and_sends_nothing(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    """Killed between the in-flight record and the click: the post never left, but the
    journal cannot tell, so the iteration is unknown and its absence is not concluded
    before the settle period; the run stays blocked and nothing is sent again."""
    url = postgres.create_database("killed_in_flight")
    titles = ["In flight 1", "In flight 2"]
    rows = write_rows(tmp_path / "rows.jsonl", titles)
    armed = {"NORTHSTAR_FAILPOINT": "after_in_flight@2"}
    worker = Worker(url, "posts", "f1", cwd=tmp_path, lanes=1, env=armed)
    workers.append(worker.ready())
    inputs = ("--base-url", site.base_url, "--params-file", str(rows), "--journal", url)
    queued = northstar("run", RECIPE, *inputs, "--queue", "posts", "--detach", cwd=tmp_path)
    assert queued.returncode == 0, queued.stderr
    run_id = queued.stdout.strip()

    assert worker.wait_for("failpoint after_in_flight 2"), worker.lines
    worker.kill()  # SIGKILL: iteration 2's post is recorded in flight and was never clicked
    workers.append(Worker(url, "posts", "f1", cwd=tmp_path).ready())  # DBOS recovers it
    watched = northstar("watch", run_id, "--journal", url, "--every", "0.2", cwd=tmp_path)
    assert watched.returncode == 4, watched.stdout

    same = ("--params-file", str(rows), "--journal", url)
    reconciled = northstar("reconcile", run_id, *same, cwd=tmp_path)
    assert reconciled.returncode == 4, reconciled.stderr + reconciled.stdout
    assert "iteration 2: unknown [OUTCOME_SETTLING]" in reconciled.stdout, reconciled.stdout
    resumed = northstar("resume", run_id, *same, cwd=tmp_path)
    assert resumed.returncode != 0, resumed.stderr + resumed.stdout
    assert "error[OUTCOME_SETTLING]" in resumed.stderr, resumed.stderr  # refused: too early

    assert Counter(s["title"] for s in site.submissions()) == Counter(titles[:1])  # sent none
    final = readers.get_run(url, run_id)
    assert final.summary.status == "blocked"
    two = next(v for v in final.iterations if v.number == 2)
    assert (two.state, two.reason_code) == ("unknown", "OUTCOME_SETTLING")
    assert sent(final) == Counter({1: 1, 2: 1})  # in flight once, never again


def test_a_worker_serves_only_its_own_queue(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    url = postgres.create_database("two_queues")
    workers.append(Worker(url, "posts", "on-posts", cwd=tmp_path, lanes=1).ready())
    workers.append(Worker(url, "other", "on-other", cwd=tmp_path, lanes=1).ready())
    titles = [f"Own queue {n}" for n in range(1, 4)]
    rows = write_rows(tmp_path / "rows.jsonl", titles)
    args = ("--base-url", site.base_url, "--params-file", str(rows), "--journal", url)
    proc = northstar("run", RECIPE, *args, "--queue", "posts", cwd=tmp_path)

    assert proc.returncode == 0, proc.stderr + proc.stdout
    detail = readers.get_run(url, run_id_of(proc.stderr))
    assert claimed_by(detail) == {"on-posts"}  # the other queue's worker took none
    assert Counter(s["title"] for s in site.submissions()) == Counter(titles)


LATE_REPORT = """\
name: late-report
version: 1
tabs:
  report:
    start: "{{ base_url }}/delayed?ms=4000"
steps:
  - id: report-ready
    tab: report
    wait_for: {visible: {role: heading, name: Report ready}}
"""


def test_a_queued_run_keeps_its_step_time_limit_on_the_worker(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    """``run --queue --timeout MS``: the worker waits as long as the run says, not its own
    default (the report comes after 4 s; 1 s is too short, the usual 10 s would do)."""
    url = postgres.create_database("timeout_carried")
    workers.append(Worker(url, "posts", "t1", cwd=tmp_path, lanes=1).ready())
    recipe = tmp_path / "late-report.yaml"
    recipe.write_text(LATE_REPORT)
    args = ("--base-url", site.base_url, "--journal", url, "--queue", "posts")
    proc = northstar("run", str(recipe), *args, "--timeout", "1000", cwd=tmp_path)

    assert proc.returncode == 1, proc.stderr + proc.stdout
    (only,) = readers.get_run(url, run_id_of(proc.stderr)).iterations
    assert (only.state, only.failing_step) == ("failed", "report-ready"), only
