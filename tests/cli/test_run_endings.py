"""Every way a run ends, driven for real: the printed summary is the journal's.

For each row of the table of endings (``northstar.readers.endings.ENDINGS``) a real
``northstar`` process runs against the fixture site and ends that way: all verified, a
check that fails, a session signed out, bad input, an output that cannot be saved, a
submission held past its timeout, a process killed mid-step, the recipe edited during
the run, a redirect to another origin, a site that is down, a killed browser, a FIFO
as the journal, and SIGINT to the process group during ``--interval``. Each time the
exit status is the row's, and the counts and the stop code printed on the last lines
equal what the journal holds, read here with plain SQL (not through Northstar's readers).

``test_the_printed_counts_come_from_the_shared_renderer`` runs the CLI with the
renderer's input shifted by thousands: its text and ``--json`` (and the API's result,
the MCP answer and a worker's log) show the shifted counts, so no front end counts by
itself.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import socket
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from structlog.testing import capture_logs

from fixtures.other_origin import OtherOrigin
from fixtures.report_screenshot import RECIPE as CHECKED_POST
from fixtures.site_server import FixtureSite
from northstar.readers import endings
from northstar.readers.endings import ending_named
from tests.cli.test_cli_recovery import HELD_POST
from tests.cli.test_cli_run import northstar, write
from tests.cli.test_stopping import Worker, chromium_of
from tests.run.test_never_twice import RECIPE as FAULT_POST
from tests.run.test_never_twice import titles

pytestmark = pytest.mark.browser

HEADLINE = re.compile(
    r"^run (?P<run_id>r-[0-9a-f]{12}): (?P<status>\w+), (?P<verified>\d+) of (?P<total>\d+) "
    r"iterations verified(?: \((?P<recorded>\d+) recorded: [^)]*\))?$",
    re.M,
)
REASON = re.compile(
    r"^(?:stopped by (?P<run_code>[A-Z_]+)|iteration \d+ of \d+ NOT verified \(\w+\): "
    r"(?P<code>[A-Z_]+))",
    re.M,
)
ROWS = "title,expected\nFirst,First\nSecond,Other\nThird,Third\n"  # row 2 expects another text


@dataclass
class Ended:
    """A finished ``northstar`` process: exit status, what it printed, and its journal."""

    code: int
    stdout: str
    stderr: str
    journal: Path

    @property
    def run_id(self) -> str:
        found = HEADLINE.search(self.stdout)
        assert found is not None, self.stdout + self.stderr
        return found["run_id"]


def journal_facts(journal: Path, run_id: str) -> dict[str, Any]:
    """What the journal holds about the run, with plain SQL: status, counts, stop code."""
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as conn:
        status, total = conn.execute(
            "SELECT status, total_iterations FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        states = dict(
            conn.execute(
                "SELECT state, count(*) FROM iterations WHERE run_id = ? GROUP BY state", (run_id,)
            ).fetchall()
        )
        codes = [
            code
            for (code,) in conn.execute(
                "SELECT reason_code FROM iterations WHERE run_id = ? AND state <> 'verified' "
                "ORDER BY number",
                (run_id,),
            )
        ]
        last = conn.execute(
            "SELECT name, payload_json FROM events WHERE run_id = ? "
            "AND name IN ('run_stopped', 'run_resumed') ORDER BY id DESC LIMIT 1",
            (run_id,),
        ).fetchone()
    stopped = json.loads(last[1])["code"] if last and last[0] == "run_stopped" else None
    assert len(codes) <= 1, codes  # each scenario leaves at most one iteration not verified
    return {
        "status": status,
        "total": total,
        "recorded": sum(states.values()),
        "verified": states.get("verified", 0),
        "code": stopped or (codes[0] if codes else None),
    }


def printed_facts(stdout: str) -> dict[str, Any]:
    """The same facts as the last lines of a run printed them."""
    head = HEADLINE.search(stdout)
    assert head is not None, stdout
    reason = REASON.search(stdout)
    return {
        "status": head["status"],
        "total": int(head["total"]),
        "recorded": int(head["recorded"] or head["verified"]),
        "verified": int(head["verified"]),
        "code": reason and (reason["run_code"] or reason["code"]),
    }


def assert_ended_as(ended: Ended, ending: str) -> dict[str, Any]:
    """The exit status is the row's; the printed counts and code are the journal's."""
    assert "Traceback" not in ended.stdout + ended.stderr
    assert ended.code == ending_named(ending).exit_code, ended.stdout + ended.stderr
    facts = journal_facts(ended.journal, ended.run_id)
    assert printed_facts(ended.stdout) == facts, ended.stdout
    return facts


def run(tmp_path: Path, recipe: str, *args: str, env: dict[str, str] | None = None) -> Ended:
    path = write(tmp_path, "recipe.yaml", recipe)
    proc = northstar("run", str(path), *args, cwd=tmp_path, extra_env=env)
    return Ended(proc.returncode, proc.stdout, proc.stderr, tmp_path / "journal.db")


def finished(worker: Worker, tmp_path: Path) -> Ended:
    """Wait for a worker's end; its exit status, stdout and every stderr line."""
    try:
        out, rest = worker.proc.communicate(timeout=120)
    finally:
        worker.watchdog.cancel()
    return Ended(worker.proc.returncode, out, "".join(worker.seen) + rest, tmp_path / "journal.db")


def run_id_seen(worker: Worker) -> str:
    """The run id the worker printed when its run started (a line already read)."""
    found = re.search(r"^run (r-[0-9a-f]{12})$", "".join(worker.seen), re.M)
    assert found is not None, worker.seen
    return found[1]


def post_args(site: FixtureSite, prefix: str, count: int, *extra: str) -> list[str]:
    base = ["-p", f"prefix={prefix}", "--base-url", site.base_url, "--repeat", str(count)]
    return [*base, *extra]


# The endings, one test each


def test_all_verified(tmp_path: Path, site: FixtureSite) -> None:
    ended = run(tmp_path, FAULT_POST, *post_args(site, "all", 2))
    facts = assert_ended_as(ended, "verified")
    assert (facts["verified"], sum(titles(site, "all").values())) == (2, 2)
    last = ended.stdout.splitlines()[-1]
    assert last == f"run {ended.run_id}: verified, 2 of 2 iterations verified"


def test_an_iteration_not_verified_names_its_step_expected_found_and_files(
    tmp_path: Path, site: FixtureSite
) -> None:
    rows = write(tmp_path, "rows.csv", ROWS)
    args = ("--params-file", str(rows), "--base-url", site.base_url, "--trace", "retain-on-failure")
    ended = run(tmp_path, CHECKED_POST, *args)
    facts = assert_ended_as(ended, "not_verified")
    assert facts == {"status": "failed", "total": 3, "recorded": 2, "verified": 1,
                     "code": "EXPECTATION_FAILED"}  # fmt: skip
    out = ended.stdout
    assert (
        "iteration 2 of 3 NOT verified (failed): EXPECTATION_FAILED at step 3 'confirm' (tab admin)"
        in out
    ), out
    assert "  expected: text of status {'equals': 'Post published: Other'}\n" in out
    assert "  found:    Post published: Second\n" in out
    assert "not started: 1 of 3 iterations (3)" in out
    assert f"details: northstar show {ended.run_id} " in out
    shot = re.search(r"^  file:     (\S+iteration-0002-failure-admin\.png)$", out, re.M)
    assert shot is not None, out
    assert Path(shot[1]).is_file()
    assert f"  file:     {Path(shot[1]).with_name('iteration-0002-trace.zip')}\n" in out
    assert site.submission_count("post") == 2  # the third row was never submitted


ACCOUNT = """
name: account
tabs:
  site: {start: "{{ base_url }}/account"}
steps:
  - id: signed-in
    tab: site
    timeout: 1000
    verify_outcome: {title: {equals: Account}}
"""


def test_a_session_signed_out_shows_as_the_check_that_needed_it(
    tmp_path: Path, site: FixtureSite
) -> None:
    """A profile whose session the site no longer knows lands on the sign-in page.

    No SIGNED_OUT code yet (its row documents that): the check fails with its own code.
    """
    host = site.base_url.split("//")[1].split(":")[0]
    cookie = {"name": "northstar_session", "value": "expired", "domain": host, "path": "/",
              "expires": -1, "httpOnly": True, "secure": False, "sameSite": "Lax"}  # fmt: skip
    profile = write(tmp_path, "profile.json", json.dumps({"cookies": [cookie], "origins": []}))
    ended = run(tmp_path, ACCOUNT, "--base-url", site.base_url, "--profile", str(profile))
    facts = assert_ended_as(ended, "signed_out")
    assert facts["code"] == "EXPECTATION_FAILED"
    assert "  found:    Sign in\n" in ended.stdout, ended.stdout  # the sign-in page's title


def test_bad_input_starts_nothing(tmp_path: Path, site: FixtureSite) -> None:
    ended = run(tmp_path, FAULT_POST, *post_args(site, "bad", 0))
    assert ended.code == ending_named("usage_error").exit_code
    [line] = ended.stderr.splitlines()
    assert line.startswith("error[REPEAT_OPTIONS_INVALID] ")
    assert ended.stdout == ""
    assert not ended.journal.exists() or journal_runs(ended.journal) == 0


def journal_runs(journal: Path) -> int:
    with sqlite3.connect(f"file:{journal}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])


def test_an_output_that_cannot_be_saved_needs_review(tmp_path: Path, site: FixtureSite) -> None:
    (tmp_path / "runs").write_text("a file where the runs' folder goes")
    ended = run(tmp_path, CHECKED_POST, "-p", "title=Kept", "-p", "expected=Kept",
                "--base-url", site.base_url)  # fmt: skip
    facts = assert_ended_as(ended, "needs_review")
    assert facts["code"] == "OUTPUT_SAVE_FAILED"


def test_a_submission_whose_outcome_is_unknown_blocks_the_run(
    tmp_path: Path, site: FixtureSite
) -> None:
    site.hold("/posts")
    ended = run(tmp_path, HELD_POST.replace("timeout: 2000", "timeout: 500"),
                "--base-url", site.base_url, "-p", "title=Held")  # fmt: skip
    site.release_held(save=False)
    facts = assert_ended_as(ended, "unknown_outcome")
    assert facts["status"] == "blocked"
    assert f"next: northstar reconcile {ended.run_id} " in ended.stdout
    assert f"then northstar resume {ended.run_id})" in ended.stdout


def test_a_process_killed_mid_step_is_interrupted_for_its_readers(
    tmp_path: Path, site: FixtureSite
) -> None:
    recipe = write(tmp_path, "recipe.yaml", FAULT_POST)
    worker = Worker.start(
        ["run", str(recipe), *post_args(site, "gone", 2)],
        tmp_path,
        env={"NORTHSTAR_FAILPOINT": "after_in_flight@2"},
    )
    worker.wait_for("failpoint after_in_flight 2")
    os.kill(worker.proc.pid, signal.SIGKILL)
    finished(worker, tmp_path)
    watched = northstar("watch", run_id_seen(worker), cwd=tmp_path)
    ended = Ended(watched.returncode, watched.stdout, watched.stderr, tmp_path / "journal.db")
    assert "run " + ended.run_id + ": interrupted, 1 of 2" in ended.stdout
    assert ended.code == ending_named("interrupted").exit_code, ended.stdout + ended.stderr
    facts = journal_facts(ended.journal, ended.run_id)
    assert (facts["status"], facts["verified"], facts["recorded"]) == ("running", 1, 2)
    printed = printed_facts(ended.stdout)
    assert (printed["verified"], printed["recorded"], printed["total"]) == (1, 2, 2)


def test_a_recipe_changed_during_the_interval_stops_the_run_by_its_binding(
    tmp_path: Path, site: FixtureSite
) -> None:
    """The case that printed "0 of 4 verified" while the journal had 1, and no reason."""
    recipe = write(tmp_path, "recipe.yaml", FAULT_POST)
    worker = Worker.start(
        ["run", str(recipe), *post_args(site, "edited", 4, "--interval", "1")],
        tmp_path,
        env={"NORTHSTAR_FAILPOINT": "after_in_flight@1"},
    )
    worker.wait_for("failpoint after_in_flight 1")
    recipe.write_text(FAULT_POST.replace("name: fault-post", "name: fault-post-2"))
    worker.go_on()
    ended = finished(worker, tmp_path)
    facts = assert_ended_as(ended, "binding_changed")
    assert facts == {"status": "failed", "total": 4, "recorded": 1, "verified": 1,
                     "code": "DEFINITION_CHANGED"}  # fmt: skip
    assert sum(titles(site, "edited").values()) == 1
    assert f"stopped by DEFINITION_CHANGED before iteration 2: the recipe {recipe} " in ended.stdout
    assert "not started: 3 of 4 iterations (2, 3, 4)" in ended.stdout
    assert "the 1 verified must not run again" in ended.stdout


LEAVING = """
name: leaving
tabs:
  site: {start: "{{ base_url }}/form"}
steps:
  - id: leave
    tab: site
    goto: "/redirect?to=TO"
"""


def test_a_redirect_to_another_origin_is_blocked(tmp_path: Path, site: FixtureSite) -> None:
    with OtherOrigin() as other:
        recipe = LEAVING.replace("TO", quote(f"{other.base_url}/landing", safe=""))
        ended = run(tmp_path, recipe, "--base-url", site.base_url)
        assert other.requests() == []
    facts = assert_ended_as(ended, "origin_blocked")
    assert facts["code"] == "ORIGIN_BLOCKED"


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed): connections are refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_site_that_is_down_is_one_line_with_the_code_and_the_url(tmp_path: Path) -> None:
    down = f"http://127.0.0.1:{closed_port()}"
    ended = run(tmp_path, FAULT_POST, "-p", "prefix=down", "--base-url", down, "--repeat", "2")
    facts = assert_ended_as(ended, "site_unreachable")
    assert facts["code"] == "SITE_UNREACHABLE"
    [line] = [line for line in ended.stdout.splitlines() if "SITE_UNREACHABLE" in line]
    assert f"{down}/posts/new could not be reached" in line
    assert "ERR_CONNECTION_REFUSED" in line
    assert "expected:" not in ended.stdout
    assert "found:" not in ended.stdout


# Seconds between iterations in which the test kills the browser: far more than reading one
# line and sending one signal take, even on a busy machine.
KILL_WINDOW_S = 10


def test_a_killed_browser_ends_the_run_as_browser_closed(tmp_path: Path, site: FixtureSite) -> None:
    recipe = write(tmp_path, "recipe.yaml", FAULT_POST)
    # The kill lands in the interval after iteration 1, before iteration 2 touched the
    # browser: without one, a busy machine lets iteration 2 dispatch its post first, and
    # that run is honestly unknown (tests/cli/test_stopping.py covers that ending).
    between = ("--interval", str(KILL_WINDOW_S))
    worker = Worker.start(["run", str(recipe), *post_args(site, "killed", 3, *between)], tmp_path)
    worker.wait_for("iteration 1/3: verified")
    os.kill(chromium_of(worker), signal.SIGKILL)
    ended = finished(worker, tmp_path)
    facts = assert_ended_as(ended, "browser_closed")
    assert facts["code"] == "BROWSER_CLOSED"
    assert facts["verified"] == sum(titles(site, "killed").values())


def test_a_fifo_as_the_journal_is_a_journal_error_at_once(
    tmp_path: Path, site: FixtureSite
) -> None:
    os.mkfifo(tmp_path / "journal.db")
    recipe = write(tmp_path, "recipe.yaml", FAULT_POST)
    proc = northstar("run", str(recipe), *post_args(site, "fifo", 1), cwd=tmp_path, timeout=60)
    assert proc.returncode == ending_named("journal_error").exit_code, proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("error[JOURNAL_ERROR] ")
    assert "not a regular file (a FIFO)" in line
    assert titles(site, "fifo") == {}


def test_ctrl_c_during_the_interval_stops_the_run(tmp_path: Path, site: FixtureSite) -> None:
    recipe = write(tmp_path, "recipe.yaml", FAULT_POST)
    worker = Worker.start(
        ["run", str(recipe), *post_args(site, "pause", 3, "--interval", "600")], tmp_path
    )
    worker.wait_for("iteration 1/3: verified")
    worker.ctrl_c()
    ended = finished(worker, tmp_path)
    facts = assert_ended_as(ended, "stopped")
    assert (facts["status"], facts["verified"], facts["code"]) == ("stopped", 1, None)
    assert f"next: northstar resume {ended.run_id} " in ended.stdout


# Only the shared renderer counts


SHIFT = {"total_iterations": 7000, "iterations_recorded": 5000, "iterations_verified": 3000}
SHIFTED_ENTRY = f"""
import dataclasses
import northstar.readers.endings as endings
real = endings.ending_of
def shifted(summary, *args, **kwargs):
    more = {{k: getattr(summary, k) + n for k, n in {SHIFT!r}.items()}}
    return real(dataclasses.replace(summary, **more), *args, **kwargs)
endings.ending_of = shifted
from northstar.__main__ import main
main()
"""


def shifted(real: Callable[..., Any]) -> Callable[..., Any]:
    def ending_of(summary: Any, *args: Any, **kwargs: Any) -> Any:
        more = {key: getattr(summary, key) + n for key, n in SHIFT.items()}
        return real(dataclasses.replace(summary, **more), *args, **kwargs)

    return ending_of


def test_the_printed_counts_come_from_the_shared_renderer(
    tmp_path: Path, site: FixtureSite
) -> None:
    """Shift what the renderer reads: every front end's counts move with it."""
    recipe = write(tmp_path, "recipe.yaml", FAULT_POST)
    args = ["run", str(recipe), *post_args(site, "shift", 2)]
    text = finished(Worker.start(args, tmp_path, entry=SHIFTED_ENTRY), tmp_path)
    assert text.code == 0, text.stdout + text.stderr
    assert f"run {text.run_id}: verified, 3002 of 7002 iterations verified\n" in text.stdout
    assert "not started: 2000 of 7002 iterations" in text.stdout
    as_json = finished(Worker.start([*args, "--json"], tmp_path, entry=SHIFTED_ENTRY), tmp_path)
    assert as_json.code == 0, as_json.stderr
    summary = json.loads(as_json.stdout)
    assert (summary["requested"], summary["recorded"], summary["verified"]) == (7002, 5002, 3002)


async def test_the_api_mcp_and_worker_log_read_the_same_renderer(
    tmp_path: Path, site: FixtureSite, host: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from northstar.api import run_result
    from northstar.cli._inputs import build_request
    from northstar.distributed.worker import Worker as QueueWorker
    from northstar.journal import Journal
    from northstar.mcp.program_tools import outcome_result
    from northstar.run.execution import execute_run

    recipe = write(tmp_path, "recipe.yaml", FAULT_POST)
    journal_path = tmp_path / "journal.db"
    request = build_request(
        {"recipe": str(recipe), "params": ("prefix=api",), "repeat": 2, "base_url": site.base_url}
    )
    with Journal.open(journal_path) as journal:
        outcome = await execute_run(request, host=host, journal=journal)
    monkeypatch.setattr(endings, "ending_of", shifted(endings.ending_of))
    result = run_result(outcome, journal_path)
    assert (result.ending.total, result.ending.verified, result.requested) == (7002, 3002, 7002)
    answer = outcome_result(outcome, journal_path).structured_content
    assert answer is not None
    assert (answer["requested"], answer["recorded"], answer["verified"]) == (7002, 5002, 3002)
    with capture_logs() as logs:
        QueueWorker(str(journal_path), "q", concurrency=1, name="w")._log_ending(outcome.run_id)
    [ended] = [entry for entry in logs if entry["event"] == "run_ended"]
    assert (ended["requested"], ended["verified"], ended["ending"]) == (7002, 3002, "verified")
