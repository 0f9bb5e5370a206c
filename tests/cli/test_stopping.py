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
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.cli._inputs import build_request
from northstar.composition import resolve_credential
from northstar.journal import Journal, SubmissionState
from northstar.run.recovery import resume_run
from tests.cli.test_cli_run import northstar as cli
from tests.run.test_never_twice import RECIPE, titles

pytestmark = pytest.mark.browser

ENTRY = "from northstar.__main__ import main; main()"
COUNT = 20
WATCHDOG_S = 240  # a worker that hangs is killed, so its test fails instead of hanging
# The submissions the journal knows were sent: every one of them reached the server.
SENT = {SubmissionState.VERIFIED, SubmissionState.DISPATCHED, SubmissionState.UNKNOWN}


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "fault-post.yaml"
    # Reconcile runs as its own process right after the fault, with the real clock: a settle
    # period of 0 lets its probe prove a submission absent at once (the click never ran).
    settled_at_once = RECIPE.replace(
        "    effect: submit\n", "    effect: submit\n    settle: 0\n", 1
    )
    path.write_text(settled_at_once)
    return path


@dataclass
class Worker:
    """A ``northstar`` process in a session (and process group) of its own."""

    proc: subprocess.Popen[str]
    watchdog: threading.Timer
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
        watchdog = threading.Timer(WATCHDOG_S, proc.kill)
        watchdog.daemon = True
        watchdog.start()
        return cls(proc, watchdog)

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
        try:
            _, rest = self.proc.communicate(timeout=timeout)
        finally:
            self.watchdog.cancel()
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


def assert_journal_matches_site(
    journal_path: Path, run_id: str, site: FixtureSite, prefix: str
) -> None:
    """Each iteration's post is on the site once if the journal records it sent, never if
    the journal has no record of it, and at most once if it was in flight when the browser
    died (the click may or may not have left: that outcome is honestly unknown)."""
    on_site = titles(site, prefix)
    with Journal.open(journal_path) as journal:
        records = {n: journal.submission(run_id, n, "publish") for n in range(1, COUNT + 1)}
    for number, record in records.items():
        posted = on_site.get(f"{prefix}-{number}", 0)
        state = None if record is None else record.state
        if state in SENT:
            assert posted == 1, (number, state)
        elif state == SubmissionState.IN_FLIGHT:
            assert posted <= 1, (number, state)
        else:
            assert posted == 0, (number, state)


def northstar(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return cli(*args, cwd=cwd, timeout=180)  # a resume of 20 iterations, on a loaded machine


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


async def test_ctrl_c_during_the_interval_ends_the_wait_at_once(
    recipe: Path, site: FixtureSite, tmp_path: Path, host: Any
) -> None:
    worker = Worker.start(run_args(recipe, "pace", site, "--interval", "600"), tmp_path)
    run_id = worker.run_id()
    worker.wait_for(f"iteration 1/{COUNT}: verified")  # now waiting ten minutes
    worker.ctrl_c()
    code, stderr = worker.finish(timeout=60)  # far less than the interval
    assert_stopped_cleanly(code, stderr)
    detail = readers.get_run(tmp_path / "journal.db", run_id)
    assert [i.state for i in detail.iterations] == ["verified"]
    assert journal_sent(tmp_path / "journal.db", run_id) == sum(titles(site, "pace").values()) == 1
    # `northstar resume` keeps the run's ten-minute interval; resume it here without one.
    again = build_request(
        {
            "recipe": str(recipe),
            "params": ("prefix=pace",),
            "repeat": COUNT,
            "base_url": site.base_url,
        }
    )
    with Journal.open(tmp_path / "journal.db") as journal:
        credential = resolve_credential(journal, run_id, None)
        outcome = await resume_run(run_id, credential, again, host=host, journal=journal)
    assert outcome.status == "verified"
    assert_each_title_once(site, "pace")


# The `--step` pause is injected (a person who never presses Resume) and the browser kept
# headless: the command itself is unchanged.
AWAY_ENTRY = """
import asyncio, dataclasses, os, sys
import browser_adapters.run_hooks as run_hooks
import northstar.cli.run_commands as run_commands

AWAY = os.environ["TEST_AWAY_AT"]

async def person(page, point):
    if f"{point.iteration} {point.step_id}" == AWAY:
        sys.stderr.write(f"paused {AWAY}\\n")
        sys.stderr.flush()
        await asyncio.Event().wait()

run_hooks.inspector_pause = person
chosen = run_commands.browser_settings
run_commands.browser_settings = lambda o: dataclasses.replace(chosen(o), headless=True)
from northstar.__main__ import main
main()
"""


def test_ctrl_c_during_a_step_pause_ends_it_and_the_step_never_acts(
    recipe: Path, site: FixtureSite, tmp_path: Path
) -> None:
    worker = Worker.start(
        run_args(recipe, "paused", site, "--step"),
        tmp_path,
        env={"TEST_AWAY_AT": "3 publish"},
        entry=AWAY_ENTRY,
    )
    run_id = worker.run_id()
    worker.wait_for("paused 3 publish")
    worker.ctrl_c()
    code, stderr = worker.finish()
    assert_stopped_cleanly(code, stderr)
    detail = readers.get_run(tmp_path / "journal.db", run_id)
    assert [i.state for i in detail.iterations] == ["verified", "verified", "stopped"]
    assert [(s.step_id, s.status) for s in detail.iterations[2].steps] == [
        ("title", "passed"),
        ("publish", "skipped"),
    ]
    sent = sum(titles(site, "paused").values())
    assert journal_sent(tmp_path / "journal.db", run_id) == sent == 2
    settle_and_resume(run_id, "paused", tmp_path, code)
    assert_each_title_once(site, "paused")


def chromium_of(worker: Worker) -> int:
    """The browser process: below the driver (Debian starts it through a shell script)."""
    for pid in descendants(worker.proc.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        flags = b" ".join(command[1:])
        # The wrapper script's shell has the same flags: it is not the browser.
        browser = b"--remote-debugging-pipe" in flags and b"--type=" not in flags
        if browser and not command[0].endswith(b"sh"):
            return pid
    raise AssertionError("no Chromium below the worker")


def assert_browser_closed(code: int, stderr: str, allowed: tuple[int, ...]) -> None:
    assert code in allowed, stderr
    assert "BROWSER_CLOSED" in stderr
    assert "Traceback" not in stderr


def test_a_browser_killed_after_an_iteration_verified_fails_the_next_one(
    recipe: Path, site: FixtureSite, tmp_path: Path
) -> None:
    worker = Worker.start(run_args(recipe, "killed", site), tmp_path)
    run_id = worker.run_id()
    worker.wait_for(f"iteration 3/{COUNT}: verified")
    os.kill(chromium_of(worker), signal.SIGKILL)
    code, stderr = worker.finish(timeout=30)  # bounded: it used to wait in new_page() for ever
    # The browser closed: resume when it is fixed (exit 8). On a busy machine the next
    # iteration may already have sent its submission when the kill lands: then its outcome is
    # honestly unknown (exit 4) and reconcile settles it before resume.
    if code == 4:
        assert "OUTCOME_UNKNOWN" in stderr, stderr
        assert "Traceback" not in stderr
    else:
        assert_browser_closed(code, stderr, allowed=(8,))
    detail = readers.get_run(tmp_path / "journal.db", run_id)
    *verified, last = detail.iterations
    assert len(verified) >= 3
    assert all(i.state == "verified" for i in verified)
    ending = {8: ("failed", "BROWSER_CLOSED"), 4: ("unknown", "OUTCOME_UNKNOWN")}[code]
    assert (last.state, last.reason_code) == ending
    assert_journal_matches_site(tmp_path / "journal.db", run_id, site, "killed")
    settle_and_resume(run_id, "killed", tmp_path, code)
    assert_each_title_once(site, "killed")


def test_a_browser_killed_mid_step_leaves_the_submission_unknown(
    recipe: Path, site: FixtureSite, tmp_path: Path
) -> None:
    worker = Worker.start(
        run_args(recipe, "killed-mid", site),
        tmp_path,
        env={"NORTHSTAR_FAILPOINT": "after_in_flight@3"},
    )
    run_id = worker.run_id()
    worker.wait_for("failpoint after_in_flight 3")  # in-flight record written, no click yet
    os.kill(chromium_of(worker), signal.SIGKILL)
    worker.go_on()
    code, stderr = worker.finish(timeout=30)
    assert code == 4, stderr
    assert "Traceback" not in stderr
    detail = readers.get_run(tmp_path / "journal.db", run_id)
    assert [i.state for i in detail.iterations] == ["verified", "verified", "unknown"]
    publish = detail.iterations[2].steps[-1]
    assert publish.error is not None
    assert publish.error["code"] == "BROWSER_CLOSED"
    assert sum(titles(site, "killed-mid").values()) == 2  # the click never happened
    settle_and_resume(run_id, "killed-mid", tmp_path, code)  # the probe finds it absent
    assert_each_title_once(site, "killed-mid")


HEADED = ("--base-url", "http://127.0.0.1:9", "--headed")


def test_headed_without_a_display_names_xvfb_run(recipe: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
    env = {k: v for k, v in env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run(
        [*[sys.executable, "-c", ENTRY, "run", str(recipe), "-p", "prefix=x"], *HEADED],
        cwd=tmp_path,
        env={**env, "NORTHSTAR_JOURNAL": str(tmp_path / "journal.db")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 8  # the browser could not be started
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("error[DISPLAY_MISSING] ")
    assert "xvfb-run" in line
    assert "DISPLAY" in line
