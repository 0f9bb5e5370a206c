"""Stopping from a terminal, and a browser that dies: real processes, real Chromium.

A terminal sends Ctrl-C's SIGINT to its whole foreground process group. Each worker here
runs ``northstar run ... --repeat 20`` as the leader of a process group of its own, and
the test sends SIGINT to that whole group (``os.killpg``), as a terminal would. The
moments are reached through the worker's own output lines and failpoints (the worker
waits on stdin there), never sleeps. The fixture site's submissions are the oracle:
each of the 20 titles must reach the server exactly once, after the run is resumed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.journal import Journal, SubmissionState
from tests.run.test_never_twice import RECIPE, titles

pytestmark = pytest.mark.browser

ENTRY = "from northstar.__main__ import main; main()"
COUNT = 20
# The submissions the journal knows were sent: every one of them reached the server.
SENT = {SubmissionState.VERIFIED, SubmissionState.DISPATCHED, SubmissionState.UNKNOWN}


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "fault-post.yaml"
    path.write_text(RECIPE)
    return path


@dataclass
class Worker:
    """A ``northstar`` process in a session (and process group) of its own."""

    proc: subprocess.Popen[str]
    seen: list[str] = field(default_factory=list)

    @classmethod
    def start(
        cls, args: list[str], cwd: Path, *, env: dict[str, str] | None = None, entry: str = ENTRY
    ) -> Worker:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
        environ |= {"NORTHSTAR_JOURNAL": str(cwd / "journal.db"), **(env or {})}
        proc = subprocess.Popen(
            [sys.executable, "-c", entry, *args],
            cwd=cwd,
            env=environ,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        return cls(proc)

    def lines(self) -> Iterator[str]:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.seen.append(line)
            yield line

    def wait_for(self, needle: str) -> str:
        for line in self.lines():
            if needle in line:
                return line
        raise AssertionError(f"the worker ended without printing {needle!r}: {self.seen}")

    def run_id(self) -> str:
        return self.wait_for("run r-").split()[1]

    def ctrl_c(self) -> None:
        """SIGINT to the worker's whole process group, as a terminal sends it."""
        os.killpg(self.proc.pid, signal.SIGINT)

    def go_on(self) -> None:
        """Let a worker waiting at a failpoint go on."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        """Exit code and everything printed on stderr."""
        _, rest = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, "".join(self.seen) + rest


def run_args(recipe: Path, prefix: str, site: FixtureSite, *extra: str) -> list[str]:
    return [
        "run",
        str(recipe),
        "-p",
        f"prefix={prefix}",
        "--base-url",
        site.base_url,
        "--repeat",
        str(COUNT),
        *extra,
    ]


def journal_sent(journal_path: Path, run_id: str) -> int:
    """How many submissions the journal records as sent (verified, dispatched, unknown)."""
    with Journal.open(journal_path) as journal:
        records = [journal.submission(run_id, n, "publish") for n in range(1, COUNT + 1)]
    return sum(1 for record in records if record is not None and record.state in SENT)


def northstar(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
    env["NORTHSTAR_JOURNAL"] = str(cwd / "journal.db")
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def settle_and_resume(run_id: str, prefix: str, tmp_path: Path, code: int) -> None:
    """``reconcile`` (only when blocked), then ``resume``: the run ends with all 20 verified."""
    params = ("-p", f"prefix={prefix}")
    if code == 4:
        settled = northstar("reconcile", run_id, *params, cwd=tmp_path)
        assert settled.returncode == 0, settled.stdout + settled.stderr
    resumed = northstar("resume", run_id, *params, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "Traceback" not in resumed.stderr
    detail = readers.get_run(tmp_path / "journal.db", run_id)
    assert detail.summary.status == "verified"
    assert [i.state for i in detail.iterations] == ["verified"] * COUNT


def assert_stopped_cleanly(code: int, stderr: str, *, allowed: tuple[int, ...] = (130,)) -> None:
    assert code in allowed, stderr
    assert "Traceback" not in stderr


def assert_each_title_once(site: FixtureSite, prefix: str) -> None:
    expected = Counter({f"{prefix}-{n}": 1 for n in range(1, COUNT + 1)})
    assert titles(site, prefix) == expected


def session_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[4])


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (Linux ``/proc``)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            except OSError:
                continue  # gone meanwhile
            parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def test_ctrl_c_during_start_up_stops_before_the_first_iteration(
    recipe: Path, site: FixtureSite, tmp_path: Path
) -> None:
    worker = Worker.start(
        run_args(recipe, "boot", site), tmp_path, env={"NORTHSTAR_FAILPOINT": "startup@0"}
    )
    worker.wait_for("failpoint startup 0")  # imports done, driver booting, no browser yet
    worker.ctrl_c()
    worker.go_on()
    run_id = worker.run_id()
    code, stderr = worker.finish()
    assert_stopped_cleanly(code, stderr)
    detail = readers.get_run(tmp_path / "journal.db", run_id)
    assert (detail.summary.status, detail.iterations) == ("stopped", ())
    assert journal_sent(tmp_path / "journal.db", run_id) == sum(titles(site, "boot").values()) == 0
    settle_and_resume(run_id, "boot", tmp_path, code)
    assert_each_title_once(site, "boot")


@pytest.mark.parametrize(
    ("point", "iteration"), [("before_in_flight", 3), ("after_in_flight", 4), ("after_dispatch", 5)]
)
def test_ctrl_c_inside_a_submission_step_lets_it_finish(
    recipe: Path, site: FixtureSite, tmp_path: Path, point: str, iteration: int
) -> None:
    """Mid-step (target found, in-flight record written) and right after the dispatch."""
    prefix = f"mid-{point}"
    worker = Worker.start(
        run_args(recipe, prefix, site),
        tmp_path,
        env={"NORTHSTAR_FAILPOINT": f"{point}@{iteration}"},
    )
    run_id = worker.run_id()
    worker.wait_for(f"failpoint {point} {iteration}")
    helpers = descendants(worker.proc.pid)  # the driver, Chromium and Chromium's helpers
    assert helpers
    assert all(session_of(pid) != worker.proc.pid for pid in helpers)  # out of Ctrl-C's reach
    worker.ctrl_c()
    worker.go_on()
    code, stderr = worker.finish()
    assert_stopped_cleanly(code, stderr, allowed=(130, 4))
    detail = readers.get_run(tmp_path / "journal.db", run_id)
    states = [i.state for i in detail.iterations]
    if code == 130:  # the step finished and verified; the next step or iteration never began
        assert states == ["verified"] * iteration
    else:  # the dispatched submission's outcome is unknown: blocked until reconciled
        assert states == ["verified"] * (iteration - 1) + ["unknown"]
    assert journal_sent(tmp_path / "journal.db", run_id) == sum(titles(site, prefix).values())
    settle_and_resume(run_id, prefix, tmp_path, code)
    assert_each_title_once(site, prefix)
