"""Chaos: real ``northstar worker`` processes while their Postgres goes away and comes back.

This module has a cluster of its own (stopped and started by its tests, with few
connection slots so a test can fill them). The workers run with short bounds (a back-off
cap of 1 s, a stop deadline of 3 s) so the outages last seconds; every wait is for a log
line, a process exit or the site's own count of what it received.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from fixtures.postgres_server import PostgresServer, postgres_missing_reason
from fixtures.site_server import FixtureSite
from fixtures.worker_processes import Worker, northstar, write_rows
from northstar import readers
from tests.cli.test_cli_run import ERROR_LINE
from tests.conftest import RECIPES
from tests.distributed.test_watch import Watch, settled
from tests.distributed.test_workers import first_to_say, sent

pytestmark = pytest.mark.browser

STOP_DEADLINE = 3.0
QUICK = ("--backoff-cap", "1", "--stop-deadline", str(STOP_DEADLINE))
EXITED = 60  # seconds a test waits for an exit it asserts (the worker's bound is far less)
QUIET = 12  # log lines a worker may write for one outage, however long (each is one line)


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresServer]:
    reason = postgres_missing_reason()
    if reason is not None:
        pytest.fail(f"{reason}: run scripts/setup.sh")
    with PostgresServer(max_connections=40) as server:
        yield server


@pytest.fixture
def pg(cluster: PostgresServer) -> Iterator[PostgresServer]:
    """The module's cluster, running again after the test whatever the test did to it."""
    yield cluster
    if not (cluster.folder / "data" / "postmaster.pid").exists():
        cluster.resume()


def recipe_without_settling(folder: Path) -> str:
    """publish-post with ``settle: 0``: a reconcile may call an unsent post absent at once."""
    text = (RECIPES / "publish-post.yaml").read_text(encoding="utf-8")
    text = text.replace("    effect: submit\n", "    effect: submit\n    settle: 0\n", 1)
    path = folder / "publish-post.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def queue(url: str, tmp: Path, site: FixtureSite, titles: list[str]) -> tuple[str, Path]:
    rows = write_rows(tmp / "rows.jsonl", titles)
    inputs = ("--base-url", site.base_url, "--params-file", str(rows), "--journal", url)
    recipe = recipe_without_settling(tmp)
    queued = northstar("run", recipe, *inputs, "--queue", "posts", "--detach", cwd=tmp)
    assert queued.returncode == 0, queued.stderr
    return queued.stdout.strip(), rows


def settle(url: str, run_id: str, rows: Path, tmp: Path) -> readers.RunDetail:
    """Follow the run to its end; reconcile and resume it if it ended blocked."""
    northstar("watch", run_id, "--journal", url, "--every", "0.2", cwd=tmp)
    same = ("--params-file", str(rows), "--journal", url)
    if readers.get_run(url, run_id).summary.status == "blocked":
        reconciled = northstar("reconcile", run_id, *same, cwd=tmp)
        assert reconciled.returncode == 0, reconciled.stderr + reconciled.stdout
    if readers.get_run(url, run_id).summary.status != "verified":
        resumed = northstar("resume", run_id, *same, cwd=tmp)
        assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    return readers.get_run(url, run_id)


def lines_since(worker: Worker, mark: int) -> list[str]:
    return worker.lines[mark:]


def exits(worker: Worker) -> int:
    return worker.process.wait(timeout=EXITED)


def test_a_postgres_restart_mid_batch_sends_every_post_exactly_once(
    tmp_path: Path, site: FixtureSite, pg: PostgresServer, workers: list[Worker]
) -> None:
    url = pg.create_database("restart_mid_batch")
    workers += [
        Worker(url, "posts", f"m{n}", cwd=tmp_path, lanes=1, takeover_every=0.5, options=QUICK)
        for n in (1, 2)
    ]
    for worker in workers:
        worker.ready()
    titles = [f"Restart {n}" for n in range(1, 5)]
    site.hold("/posts")  # the first post to arrive waits there: an iteration mid-submission
    run_id, rows = queue(url, tmp_path, site, titles)
    site.wait_held()

    pg.halt()  # every session ends, as in a restart for an upgrade or a failover
    marks = [len(worker.lines) for worker in workers]
    for worker in workers:
        assert worker.wait_for("database_unreachable"), worker.lines
    site.release_held(save=True)  # the post is made while its worker cannot journal it
    pg.resume()
    for worker in workers:
        assert worker.wait_for("database_reachable"), worker.lines
    outage = [lines_since(worker, mark) for worker, mark in zip(workers, marks, strict=True)]

    final = settle(url, run_id, rows, tmp_path)
    assert Counter(s["title"] for s in site.submissions()) == Counter(titles)  # 0 dup, 0 lost
    assert final.summary.status == "verified"
    assert all(count == 1 for count in sent(final).values())  # each sent once, never again
    for lines in outage:
        assert len(lines) <= QUIET, lines
        assert not [line for line in lines if "Traceback" in line or "dbos:" in line], lines
    for worker in workers:  # both survived the outage: SIGTERM drains them
        assert worker.terminate(timeout=EXITED) == 0
        assert worker.wait_for("worker stopped")


def test_workers_stop_in_time_and_give_up_in_time_while_postgres_is_down(
    tmp_path: Path, site: FixtureSite, pg: PostgresServer, workers: list[Worker]
) -> None:
    url = pg.create_database("stop_while_down")
    armed = {"NORTHSTAR_FAILPOINT": "before_in_flight@2"}  # whoever takes iteration 2 hangs
    bounds = (*QUICK, "--give-up-after", "3")
    workers += [
        Worker(url, "posts", f"s{n}", cwd=tmp_path, lanes=1, env=armed, options=bounds)
        for n in (1, 2, 3)
    ]
    for worker in workers:
        worker.ready()
    titles = [f"Stopped {n}" for n in range(1, 4)]
    run_id, rows = queue(url, tmp_path, site, titles)
    hung = first_to_say("failpoint before_in_flight 2", workers)
    stopped, gives_up = (worker for worker in workers if worker is not hung)
    for worker in (stopped, gives_up):
        worker.release_failpoint()  # if iteration 2 comes to it later, it passes the point
    follow = Watch(url, run_id, tmp_path)
    try:
        assert follow.wait_until(settled(1, 3)), follow.lines  # only iteration 2 is in progress
    finally:
        follow.kill()

    pg.halt()
    marks = {worker.name: len(worker.lines) for worker in (stopped, gives_up)}
    assert stopped.wait_for("database_unreachable"), stopped.lines
    # Idle, or still past its last verdict (its probe control, the run's status): nothing
    # is in progress either way, so it stops at once with 0 (the next test forces the latter).
    stopped.process.terminate()
    hung.process.terminate()  # its step never ends (a hung page): the deadline ends it
    assert exits(stopped) == 0, stopped.lines
    assert exits(hung) == 130, hung.lines  # stopped with an iteration left to recovery
    assert hung.wait_for("not stopped within 3 s: exiting (130); 1 iteration(s) left")
    assert exits(gives_up) == 75, gives_up.lines  # the database stayed away past its bound
    gives_up.wait_for("<end of output>", 1)
    codes = [m["code"] for line in gives_up.lines if (m := ERROR_LINE.match(line))]
    assert codes == ["JOURNAL_UNAVAILABLE"], gives_up.lines
    for worker in (stopped, gives_up):
        down = lines_since(worker, marks[worker.name])
        assert len(down) <= QUIET, down
        assert not [line for line in down if "Traceback" in line or "dbos:" in line], down

    pg.resume()  # the next worker under the hung one's name recovers what it left
    workers.append(Worker(url, "posts", hung.name, cwd=tmp_path, lanes=1, options=QUICK).ready())
    final = settle(url, run_id, rows, tmp_path)
    assert Counter(s["title"] for s in site.submissions()) == Counter(titles)
    assert final.summary.status == "verified"
    assert sent(final) == Counter(range(1, 4))


def test_a_stop_after_the_verdict_while_postgres_is_down_exits_0_and_the_run_still_ends(
    tmp_path: Path, site: FixtureSite, pg: PostgresServer, workers: list[Worker]
) -> None:
    """The verdict is journaled; the lane's probe control and the run's status are not yet.

    The failpoint holds the lane at that moment while the database goes and the stop comes.
    A deadline far above the control's page load: the lane, not the deadline, ends it.
    """
    url = pg.create_database("stop_after_verdict")
    paused = {"NORTHSTAR_FAILPOINT": "after_verdict@1"}
    bounds = ("--backoff-cap", "1", "--stop-deadline", str(EXITED / 2))
    worker = Worker(url, "posts", "v1", cwd=tmp_path, lanes=1, env=paused, options=bounds)
    workers.append(worker.ready())
    run_id, rows = queue(url, tmp_path, site, ["Settled 1"])
    assert worker.wait_for("failpoint after_verdict 1"), worker.lines

    pg.halt()
    worker.process.terminate()
    worker.release_failpoint()
    assert exits(worker) == 0, worker.lines
    worker.wait_for("<end of output>", 1)
    assert [line for line in worker.lines if "iteration_settled_left_on_queue" in line]
    assert worker.lines[-1] == "worker stopped", worker.lines  # nothing left in progress

    pg.resume()  # the same name recovers the queue's record: the run gets its status
    workers.append(Worker(url, "posts", "v1", cwd=tmp_path, lanes=1, options=QUICK).ready())
    final = settle(url, run_id, rows, tmp_path)
    assert [s["title"] for s in site.submissions()] == ["Settled 1"]
    assert final.summary.status == "verified"
    assert sent(final) == Counter([1])


def test_a_full_postgres_refuses_a_new_worker_with_a_code_and_not_the_running_ones(
    tmp_path: Path, site: FixtureSite, pg: PostgresServer, workers: list[Worker]
) -> None:
    url = pg.create_database("full_house")
    options = (*QUICK, "--give-up-after", "60")
    running = Worker(url, "posts", "f1", cwd=tmp_path, lanes=1, options=options).ready()
    workers.append(running)
    titles = [f"Full {n}" for n in range(1, 3)]
    site.hold("/posts")
    run_id, rows = queue(url, tmp_path, site, titles)
    site.wait_held()

    mark = len(running.lines)
    with FullHouse(pg.url("full_house")):  # every connection slot is taken
        late = Worker(url, "posts", "f2", cwd=tmp_path, lanes=1, options=options)
        workers.append(late)
        code = exits(late)
        late.wait_for("<end of output>", 1)
        assert code == 75, late.lines
        codes = [m["code"] for line in late.lines if (m := ERROR_LINE.match(line))]
        assert codes == ["JOURNAL_UNAVAILABLE"], late.lines
        site.release_held(save=True)  # the running worker goes on with its sessions
    final = settle(url, run_id, rows, tmp_path)
    assert Counter(s["title"] for s in site.submissions()) == Counter(titles)
    assert final.summary.status == "verified"
    assert len(lines_since(running, mark)) <= QUIET, running.lines
    assert running.terminate(timeout=EXITED) == 0


class FullHouse:
    """Holds every free connection slot of the server until the block ends."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.held: list[Any] = []

    def __enter__(self) -> FullHouse:
        while True:
            try:
                self.held.append(psycopg.connect(self.url, connect_timeout=5))
            except psycopg.OperationalError as exc:
                if "too many clients" not in str(exc):
                    raise
                return self

    def __exit__(self, *exc: object) -> None:
        for conn in self.held:
            conn.close()
