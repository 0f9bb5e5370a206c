"""``northstar watch`` follows a queued run through a worker's death to the run's real end.

The pid in the journal is only the last claimer's: when that worker is SIGKILLed, a
survivor takes its iteration over, and ``watch`` must keep following (not call the run
interrupted) until the journal records the run settled.
"""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from fixtures.worker_processes import ENTRY, Worker
from northstar import readers
from tests.distributed.test_takeover import queue_run, start_pair
from tests.distributed.test_workers import first_to_say, sent

pytestmark = pytest.mark.browser


class Watch:
    """A ``northstar watch`` child process whose stdout lines are read as they come."""

    def __init__(self, url: str, run_id: str, cwd: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
        self.lines: list[str] = []
        self._partial = b""
        self.process = subprocess.Popen(
            [sys.executable, "-c", ENTRY, "watch", run_id, "--journal", url, "--every", "0.2"],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )

    def wait_until(self, seen: Callable[[list[str]], bool], timeout: float = 90) -> bool:
        """Read lines until ``seen(lines)``; ``False`` at the deadline or when watch exits."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while not seen(self.lines):
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    return False
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    return seen(self.lines)
                *complete, self._partial = (self._partial + chunk).split(b"\n")
                self.lines.extend(line.decode(errors="replace") for line in complete)
        return True

    def finish(self, timeout: float = 120) -> int:
        self.wait_until(lambda lines: False, timeout)  # read to EOF
        return self.process.wait(timeout=30)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)


def settled(*numbers: int) -> Callable[[list[str]], bool]:
    def seen(lines: list[str]) -> bool:
        return all(
            any(re.match(rf"iteration {n}: (\S+ -> )?verified\b", line) for line in lines)
            for n in numbers
        )

    return seen


def test_watch_follows_a_queued_run_past_a_killed_worker_to_its_end(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    url = postgres.create_database("watch_killed_worker")
    workers += start_pair(url, tmp_path, "before_in_flight", "k", at=3)
    titles = [f"Watched {n}" for n in range(1, 4)]
    run_id, _ = queue_run(url, tmp_path, site, titles)
    watch = Watch(url, run_id, tmp_path)
    try:
        paused = first_to_say("failpoint before_in_flight 3", workers)
        survivor = next(worker for worker in workers if worker is not paused)
        survivor.release_failpoint()  # when iteration 3 comes to it, it passes the point
        assert watch.wait_until(settled(1, 2)), watch.lines
        # The journal's pid is the paused worker's (iteration 3 was claimed last): the probe
        # a local run gets would call the run interrupted as soon as that worker is gone.
        assert readers.get_run(url, run_id).summary.worker_pid == paused.process.pid
        paused.kill()  # SIGKILL, not restarted
        assert watch.process.poll() is None
        assert watch.finish() == 0, watch.lines  # exit 0: the run ended verified
    finally:
        watch.kill()
    assert f"run {run_id}: running -> verified, 3/3 verified" in watch.lines
    assert not [line for line in watch.lines if "interrupted" in line]
    final = readers.get_run(url, run_id)
    assert final.summary.status == "verified"
    assert Counter(s["title"] for s in site.submissions()) == Counter(titles)
    assert sent(final) == Counter(range(1, 4))
    claims = [e.payload for e in final.events if e.name == "iteration_claimed"]
    assert [c["worker"] for c in claims if c["iteration"] == 3] == [paused.name, survivor.name]
