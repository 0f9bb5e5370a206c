"""Runs as separate processes: batch input checks, watch across processes, kill and stop.

The worker runs in a child process like a person would start it; the fixture site runs
in this process and counts submissions; the journal is read back with the readers.
Synchronisation uses the worker's own output lines (blocking reads), never sleeps.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers

pytestmark = pytest.mark.browser

NORTHSTAR = [sys.executable, "-c", "from northstar.__main__ import main; main()"]

SLOW_POST = """
name: slow-post
params:
  title: {type: string, required: true}
tabs:
  admin: {start: "{{ base_url }}/posts/new"}
steps:
  - id: slow
    tab: admin
    goto: "/slow?ms=1500"
  - id: back
    tab: admin
    goto: "/posts/new"
  - id: title
    tab: admin
    fill: {target: {label: Title}, value: "{{ title }}"}
  - id: publish
    tab: admin
    click: {target: {role: button, name: Publish}}
    effect: submit
    expect:
      - visible: {role: status}
outputs:
  status: {tab: admin, from: text, target: {role: status}}
"""


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "slow-post.yaml"
    path.write_text(SLOW_POST)
    return path


def start(args: list[str], tmp_path: Path, *, verbose: bool = False) -> subprocess.Popen[str]:
    flags = ["--log-json", "-v"] if verbose else []
    env = {**os.environ, "NORTHSTAR_JOURNAL": str(tmp_path / "journal.db")}
    return subprocess.Popen(
        [*NORTHSTAR, *flags, *args],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def lines_until(stream: Iterator[str], needle: str) -> str:
    """Read lines until one contains ``needle`` (a blocking read, not a sleep)."""
    for line in stream:
        if needle in line:
            return line
    raise AssertionError(f"the worker ended without printing {needle!r}")


def run_id_of(process: subprocess.Popen[str]) -> str:
    """The run id: the ``run r-...`` line, or the ``run_started`` event under --log-json."""
    assert process.stderr is not None
    for line in process.stderr:
        if line.startswith("run r-"):
            return line.split("run ", 1)[1].split()[0]
        if '"run_started"' in line:
            return str(json.loads(line)["run_id"])
    raise AssertionError("the worker ended without saying which run it started")


def test_bad_row_is_reported_before_any_browser_starts(recipe: Path, tmp_path: Path) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text('title\nfirst\n""\nthird\n')
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text('{"title": "a"}\n{"title": ["not", "text"]}\n')
    for path, row in ((rows, "row 2"), (jsonl, "row 2")):
        done = subprocess.run(
            [
                *NORTHSTAR,
                "run",
                str(recipe),
                "--params-file",
                str(path),
                "--base-url",
                "http://127.0.0.1:9",
                "--browser",
                "/nonexistent/chrome",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        # A missing browser would be BROWSER_NOT_FOUND: the row was checked before launch.
        assert done.returncode == 2
        assert row in done.stderr
        assert "BROWSER_NOT_FOUND" not in done.stderr
        assert "Traceback" not in done.stderr


def test_watch_follows_a_run_in_another_process(
    recipe: Path, site: FixtureSite, tmp_path: Path
) -> None:
    worker = start(
        [
            "run",
            str(recipe),
            "-p",
            "title=Watched",
            "--base-url",
            site.base_url,
            "--repeat",
            "2",
            "--interval",
            "1",
        ],
        tmp_path,
    )
    run_id = run_id_of(worker)
    watcher = start(["watch", run_id, "--every", "0.2"], tmp_path)
    watched_out, watched_err = watcher.communicate(timeout=120)
    worker.communicate(timeout=120)
    assert worker.returncode == 0
    assert watcher.returncode == 0, watched_err
    assert run_id in watched_out
    assert "verified" in watched_out.splitlines()[-3:][0] or "verified" in watched_out
    assert site.submission_count("post") == 2


def test_sigkill_mid_iteration_reads_back_not_verified(
    recipe: Path, site: FixtureSite, tmp_path: Path
) -> None:
    worker = start(
        ["run", str(recipe), "-p", "title=Killed", "--base-url", site.base_url],
        tmp_path,
        verbose=True,
    )
    assert worker.stderr is not None
    run_id = run_id_of(worker)
    lines_until(worker.stderr, '"step": "slow"')
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    detail = readers.get_run(tmp_path / "journal.db", run_id)
    assert detail.effective_status == readers.INTERRUPTED
    assert [i.effective_state for i in detail.iterations] == [readers.INTERRUPTED]
    assert detail.iterations[0].state != "verified"
    assert site.submission_count("post") == 0


def test_sigterm_stops_after_the_current_step(
    recipe: Path, site: FixtureSite, tmp_path: Path
) -> None:
    worker = start(
        [
            "run",
            str(recipe),
            "-p",
            "title=Stopped",
            "--base-url",
            site.base_url,
            "--repeat",
            "3",
            "--json",
        ],
        tmp_path,
        verbose=True,
    )
    assert worker.stderr is not None
    run_id = run_id_of(worker)
    lines_until(worker.stderr, '"step": "slow"')
    worker.send_signal(signal.SIGTERM)
    out, _ = worker.communicate(timeout=60)
    assert worker.returncode == 130
    summary = json.loads(out)
    assert summary["status"] == "stopped"
    assert [i["state"] for i in summary["iterations"]] == ["stopped"]
    detail = readers.get_run(tmp_path / "journal.db", run_id)
    assert [i.state for i in detail.iterations] == ["stopped"]
    slow = next(s for s in detail.iterations[0].steps if s.step_id == "slow")
    assert slow.status == "passed"  # the step in progress was allowed to finish
    assert site.submission_count("post") == 0
