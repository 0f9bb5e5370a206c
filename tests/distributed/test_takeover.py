"""A dead worker's iterations are taken over by the surviving worker, never run twice.

The liveness locks are tested on the throwaway Postgres; the takeover itself with real
``northstar worker`` processes, the fixture site and headless Chromium: one worker is
SIGKILLed at a failpoint and not restarted, and the survivor puts its work back on the
queue, where the journal decides each iteration (``claim_action``).
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from fixtures.worker_processes import Worker, northstar, write_rows
from northstar import readers
from northstar.distributed.takeover import Liveness, liveness_key, takeover_candidates
from northstar.errors import UsageInvalid
from tests.conftest import RECIPES
from tests.distributed.test_workers import first_to_say, sent

RECIPE = str(RECIPES / "publish-post.yaml")
EVERY = 0.3  # seconds between a survivor's checks for dead workers


def test_candidates_are_the_other_owners_of_pending_work_once_each() -> None:
    owners = ["w2", None, "w1", "w3", "w2", "", "w1"]
    assert takeover_candidates(owners, "w1") == ["w2", "w3"]
    assert takeover_candidates(["w1"], "w1") == []


def test_liveness_keys_are_stable_signed_64_bit_and_differ_by_name() -> None:
    # Pinned: workers of different Northstar versions must lock the same key for a name.
    assert liveness_key("w1") == 906732784391853156
    assert len({liveness_key(f"w{n}") for n in range(1000)}) == 1000


def test_a_worker_is_taken_over_only_once_its_lock_is_gone(postgres: Any) -> None:
    url = postgres.create_database("liveness")
    recovered: list[str] = []

    def recover(name: str) -> int:
        recovered.append(name)
        return 1

    alive = Liveness.hold(url, "w1")
    survivor = Liveness.hold(url, "w2")
    try:
        assert survivor.try_take_over("w1", recover) is None  # w1 holds its lock
        with pytest.raises(UsageInvalid, match="already serving"):
            Liveness.hold(url, "w1", wait_seconds=0.2)  # a second worker under one name
        alive.close()  # the process is gone: Postgres ends its session, and the lock
        assert first_takeover(survivor, "w1", recover) == 1
        assert recovered == ["w1"]
        Liveness.hold(url, "w1", wait_seconds=0.2).close()  # released after the takeover
    finally:
        survivor.close()


def first_takeover(survivor: Liveness, name: str, recover: Any) -> int | None:
    """Try as a survivor's checks do: the dead session ends a moment after its socket."""
    deadline = time.monotonic() + 5
    while (taken := survivor.try_take_over(name, recover)) is None:
        if time.monotonic() > deadline:
            return None
    return taken


def start_pair(url: str, tmp: Path, point: str, prefix: str, at: int = 2) -> list[Worker]:
    """Two one-lane workers armed at ``point`` of iteration ``at``, checking every ``EVERY`` s."""
    armed = {"NORTHSTAR_FAILPOINT": f"{point}@{at}"}
    pair = [
        Worker(url, "posts", f"{prefix}{n}", cwd=tmp, lanes=1, env=armed, takeover_every=EVERY)
        for n in (1, 2)
    ]
    for worker in pair:
        worker.ready()
    return pair


def queue_run(url: str, tmp: Path, site: FixtureSite, titles: list[str]) -> tuple[str, Path]:
    rows = write_rows(tmp / "rows.jsonl", titles)
    inputs = ("--base-url", site.base_url, "--params-file", str(rows), "--journal", url)
    queued = northstar("run", RECIPE, *inputs, "--queue", "posts", "--detach", cwd=tmp)
    assert queued.returncode == 0, queued.stderr
    return queued.stdout.strip(), rows


def kill_the_paused_one(pair: list[Worker], point: str) -> tuple[Worker, Worker]:
    paused = first_to_say(f"failpoint {point} 2", pair)
    survivor = next(worker for worker in pair if worker is not paused)
    survivor.release_failpoint()  # if iteration 2 comes to it, it passes the point
    paused.kill()  # SIGKILL, and it is not restarted
    return paused, survivor


def watch(url: str, run_id: str, tmp: Path) -> readers.RunDetail:
    northstar("watch", run_id, "--journal", url, "--every", "0.2", cwd=tmp)
    return readers.get_run(url, run_id)


def recovered_by(detail: readers.RunDetail) -> set[str]:
    return {e.payload["worker"] for e in detail.events if e.name == "iteration_recovered"}


@pytest.mark.browser
def test_a_survivor_takes_over_a_dead_workers_dispatched_iteration_as_unknown(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    url = postgres.create_database("takeover_dispatched")
    workers += start_pair(url, tmp_path, "after_dispatch", "d")
    titles = [f"Taken over {n}" for n in range(1, 4)]
    run_id, rows = queue_run(url, tmp_path, site, titles)

    dead, survivor = kill_the_paused_one(workers, "after_dispatch")
    assert survivor.wait_for(f"took over 1 unfinished iteration(s) of {dead.name}")
    blocked = watch(url, run_id, tmp_path)
    assert blocked.summary.status == "blocked"
    two = next(v for v in blocked.iterations if v.number == 2)
    assert (two.state, two.reason_code) == ("unknown", "OUTCOME_UNKNOWN")
    assert recovered_by(blocked) == {survivor.name}  # decided by the survivor, sent nothing

    same = ("--params-file", str(rows), "--journal", url)
    reconciled = northstar("reconcile", run_id, *same, cwd=tmp_path)
    assert reconciled.returncode == 0, reconciled.stderr + reconciled.stdout
    resumed = northstar("resume", run_id, *same, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert Counter(s["title"] for s in site.submissions()) == Counter(titles)  # 0 dup, 0 lost
    final = readers.get_run(url, run_id)
    assert final.summary.status == "verified"
    assert sent(final) == Counter(range(1, 4))  # in flight once each, never sent again


@pytest.mark.browser
def test_a_survivor_runs_again_a_dead_workers_iteration_that_sent_nothing(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    url = postgres.create_database("takeover_unsent")
    workers += start_pair(url, tmp_path, "before_in_flight", "u")
    titles = [f"Run again {n}" for n in range(1, 4)]
    run_id, _ = queue_run(url, tmp_path, site, titles)

    dead, survivor = kill_the_paused_one(workers, "before_in_flight")
    assert survivor.wait_for(f"took over 1 unfinished iteration(s) of {dead.name}")
    final = watch(url, run_id, tmp_path)
    assert final.summary.status == "verified"
    assert Counter(s["title"] for s in site.submissions()) == Counter(titles)
    assert sent(final) == Counter(range(1, 4))
    claims = [e.payload for e in final.events if e.name == "iteration_claimed"]
    assert [c["worker"] for c in claims if c["iteration"] == 2] == [dead.name, survivor.name]
