"""A program's worker SIGKILLed at a submit failpoint: unknown, then reconcile and resume.

The worker (``northstar run flow.py``) runs in its own process group; the test kills the
whole group (worker, program and browser) with SIGKILL once the worker prints that it
reached the failpoint. The fixture site's submissions are the oracle: after the
program's own reconcile probe and a resume, every row is there exactly once.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.composition import resolve_credential
from northstar.journal import Journal, SubmissionState
from northstar.programs import load_program
from northstar.programs.recovery import reconcile_program, resume_program
from northstar.run.failpoints import FAILPOINT_ENV
from tests.cli.test_cli_run import northstar
from tests.programs.conftest import program_request, write_program
from tests.run.clock import Clock

pytestmark = pytest.mark.browser

NORTHSTAR = [sys.executable, "-c", "from northstar.__main__ import main; main()"]
PAST_SETTLE_S = 61  # the probe's "absent" counts once the default settle period is over
BODY = """
title = f"{nx.params['prefix']}-{nx.iteration}"
site = nx.tab("site")
await site.fill({"label": "Title"}, title)
await site.click(
    {"role": "button", "name": "Publish"},
    submit=True,
    expect=[{"visible": {"role": "status"}}],
    reconcile=[
        {"goto": f"/posts?q={title}"},
        {"check": {"visible": {"role": "link", "name": title, "exact": True}}},
    ],
)
await nx.complete()
"""
DECLARATION = (
    'PROGRAM = {"name": "kill-post", "timeout": 2000,'
    ' "params": {"prefix": {"type": "string", "required": True}},'
    ' "tabs": {"site": {"start": "{{ base_url }}/posts/new"}}}'
)


def _kill_at(program: Path, prefix: str, site: FixtureSite, journal: Path, point: str) -> str:
    env = {**os.environ, "NORTHSTAR_JOURNAL": str(journal), FAILPOINT_ENV: point}
    command = [*NORTHSTAR, "run", str(program), "-p", f"prefix={prefix}"]
    command += ["--base-url", site.base_url, "--repeat", "2"]
    worker = subprocess.Popen(
        command,
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert worker.stderr is not None
    run_id = ""
    for line in worker.stderr:
        run_id = line.split()[1] if line.startswith("run r-") else run_id
        if line.startswith("failpoint "):
            break
    os.killpg(worker.pid, signal.SIGKILL)  # the worker, its program and its browser at once
    worker.communicate(timeout=60)
    return run_id


def _reconcile_and_resume_from_the_command_line(
    run_id: str, site: FixtureSite, folder: Path
) -> None:
    """``northstar reconcile`` then ``resume``, each in a process of its own."""
    inputs = ("-p", "prefix=k", "--base-url", site.base_url)
    reconciled = northstar("reconcile", run_id, *inputs, cwd=folder)
    assert reconciled.returncode == 0, reconciled.stderr
    assert f"run {run_id}: stopped; resume it to go on" in reconciled.stdout
    assert re.search(r"\[submit\.flow\.L\d+\.1: found\]", reconciled.stdout), reconciled.stdout
    resumed = northstar("resume", run_id, *inputs, cwd=folder)
    assert resumed.returncode == 0, resumed.stderr
    # The run's ending, from the journal: both iterations (the resume did the second).
    assert f"run {run_id}: verified, 2 of 2 iterations verified" in resumed.stdout


def _titles(site: FixtureSite, prefix: str) -> Counter[str]:
    return Counter(s["title"] for s in site.submissions() if s["title"].startswith(prefix))


@pytest.mark.parametrize(
    ("point", "sent"),
    [("after_in_flight@1", 0), ("after_dispatch@2", 2)],
)
async def test_a_killed_program_is_unknown_then_reconciled_and_resumed_without_a_duplicate(
    tmp_path: Path, host: Any, site: FixtureSite, point: str, sent: int
) -> None:
    program = write_program(tmp_path, BODY, declaration=DECLARATION)
    journal_path = tmp_path / "journal.db"
    run_id = _kill_at(program, "k", site, journal_path, point)
    assert sum(_titles(site, "k").values()) == sent
    number = int(point.split("@")[1])
    detail = readers.get_run(journal_path, run_id)
    assert {i.number: i.effective_state for i in detail.iterations}[number] == readers.INTERRUPTED
    with Journal.open(journal_path, now=Clock(ahead_s=PAST_SETTLE_S)) as journal:
        [open_one] = journal.open_submissions(run_id, number)
        assert open_one.state in (SubmissionState.IN_FLIGHT, SubmissionState.DISPATCHED)
        if sent:  # found by the probe, no settle period to wait for: the commands themselves
            _reconcile_and_resume_from_the_command_line(run_id, site, tmp_path)
            assert _titles(site, "k") == Counter({"k-1": 1, "k-2": 1})
            return
        credential = resolve_credential(journal, run_id, None)
        request = program_request(program, site.base_url, repeat=2, params={"prefix": "k"})
        [decision] = await reconcile_program(
            run_id, credential, request, host=host, journal=journal
        )
        assert [str(v) for _, v in decision.verdicts] == ["absent" if sent == 0 else "found"]
        declaration, _ = load_program(program)
        outcome = await resume_program(
            run_id, credential, request, declaration, host=host, journal=journal
        )
    assert outcome.status == "verified", outcome.results
    assert _titles(site, "k") == Counter({"k-1": 1, "k-2": 1})
