"""How a program's iteration ends when its process dies, a submission's check fails, or it
goes silent: in real headless Chromium against the fixture site, whose submissions are the
oracle (each entry exactly once).

The host is this test's process and survives: only the program's process is killed (at a
submit failpoint the test arms, by the pid the broker reports) or ended at its time limit.
"""

from __future__ import annotations

import os
import select
import signal
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.composition import resolve_credential
from northstar.errors import ProgramIterationNotVerified, RunBlocked
from northstar.journal import Journal, SubmissionState
from northstar.programs import ProgramBroker, load_program
from northstar.programs.child_process import ChildRun
from northstar.programs.recovery import reconcile_program, resume_program
from northstar.run.execution import RunOutcome
from northstar.run.failpoints import Failpoint, no_failpoint
from northstar.run.recovery import remaining_iterations
from tests.programs.conftest import program_request, write_program

pytestmark = pytest.mark.browser

NEVER = '[{"visible": {"text": "this text is never shown"}}]'
SHOWN = '[{"visible": {"role": "status"}}]'
NEVER_CONNECTS = "import threading\nthreading.Event().wait()  # never set\n"
HANG = "await asyncio.Event().wait()  # never set: the program goes silent"


def _declaration(timeout_s: float = 300) -> str:
    return (
        f'PROGRAM = {{"name": "ends", "timeout": 1000, "timeout_s": {timeout_s},'
        ' "params": {"prefix": {"type": "string", "required": True}},'
        ' "tabs": {"site": {"start": "{{ base_url }}/posts/new"}}}'
    )


def _submit(expect: str) -> str:
    """Program lines: publish one post titled PREFIX-ITERATION, with its reconcile probe."""
    return f"""
title = f"{{nx.params['prefix']}}-{{nx.iteration}}"
site = nx.tab("site")
await site.fill({{"label": "Title"}}, title)
await site.click(
    {{"role": "button", "name": "Publish"}},
    submit=True,
    expect={expect},
    reconcile=[
        {{"goto": f"/posts?q={{title}}"}},
        {{"check": {{"visible": {{"role": "link", "name": title, "exact": True}}}}}},
    ],
)
"""


def _program(folder: Path, body: str, timeout_s: float = 300) -> Path:
    program = write_program(folder, body, declaration=_declaration(timeout_s))
    program.write_text("import asyncio\n" + program.read_text())
    return program


def _titles(site: FixtureSite, prefix: str) -> Counter[str]:
    return Counter(s["title"] for s in site.submissions() if s["title"].startswith(prefix))


def _broker(
    program: Path,
    site: FixtureSite,
    host: Any,
    journal: Journal,
    prefix: str,
    *,
    repeat: int = 1,
    failpoint: Failpoint = no_failpoint,
) -> ProgramBroker:
    declaration, _ = load_program(program)
    request = program_request(program, site.base_url, repeat=repeat, params={"prefix": prefix})
    return ProgramBroker(request, declaration, host=host, journal=journal, failpoint=failpoint)


async def _reconcile_and_resume(broker: ProgramBroker, run_id: str) -> RunOutcome:
    """``northstar reconcile`` (the recorded probe) then ``resume``, on the same host."""
    journal, host = broker.journal, broker.host
    credential = resolve_credential(journal, run_id, None)
    await reconcile_program(run_id, credential, broker.request, host=host, journal=journal)
    return await resume_program(
        run_id, credential, broker.request, broker.declaration, host=host, journal=journal
    )


def _iteration(journal: Journal, run_id: str, number: int) -> tuple[str, str, str]:
    """The journal's own record of the iteration's verdict."""
    with sqlite3.connect(journal.path) as db:
        [row] = db.execute(
            "SELECT state, reason_code, reason FROM iterations WHERE run_id = ? AND number = ?",
            (run_id, number),
        ).fetchall()
    return row[0], row[1], row[2]


def _kill_and_wait(pid: int) -> None:
    """SIGKILL the program's process and wait (on its pidfd, no sleep) until it is gone."""
    pidfd = os.pidfd_open(pid)
    try:
        os.kill(pid, signal.SIGKILL)
        select.select([pidfd], [], [], 10)
    finally:
        os.close(pidfd)


async def test_the_program_killed_alone_after_dispatch_is_unknown_then_reconciled_once(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    killed: list[int] = []

    def kill_the_program(point: str, iteration: int) -> None:
        if (point, iteration) == ("after_dispatch", 1):
            pid = broker.program_pid
            assert pid is not None
            assert pid != os.getpid()  # the program's process, never the host's
            killed.append(pid)
            _kill_and_wait(pid)

    program = _program(tmp_path, _submit(SHOWN) + "await nx.complete()")
    broker = _broker(program, site, host, journal, "pk", repeat=2, failpoint=kill_the_program)
    outcome = await broker.run()
    assert killed
    assert outcome.status == "blocked", outcome.results
    assert [r.state.value for r in outcome.results] == ["unknown"]  # no second iteration
    state, code, reason = _iteration(journal, outcome.run_id, 1)
    assert (state, code) == ("unknown", "OUTCOME_UNKNOWN")
    assert "killed by a signal" in reason
    assert "submit.flow.L" in reason  # the open submission, by its step
    [open_one] = journal.open_submissions(outcome.run_id, 1)
    assert open_one.state is SubmissionState.DISPATCHED
    assert _titles(site, "pk") == Counter({"pk-1": 1})
    resumed = await _reconcile_and_resume(broker, outcome.run_id)
    assert resumed.status == "verified", resumed.results
    assert _titles(site, "pk") == Counter({"pk-1": 1, "pk-2": 1})


async def test_a_submission_whose_expectation_fails_is_unknown_and_never_sent_again(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    program = _program(tmp_path, _submit(NEVER) + "await nx.complete()")
    broker = _broker(program, site, host, journal, "ex")
    outcome = await broker.run()
    assert outcome.status == "blocked", outcome.results
    [result] = outcome.results
    assert not result.verified
    assert result.reason_code == "OUTCOME_UNKNOWN"
    assert "submit.flow.L" in (result.reason or "")
    assert "expectation did not hold: visible text" in (result.reason or "")
    [submit] = [s for s in result.steps if s.step_id.startswith("submit.")]
    assert submit.status.value == "failed"  # the expectation is part of the submit step
    [open_one] = journal.open_submissions(outcome.run_id, 1)
    assert open_one.state is SubmissionState.UNKNOWN
    assert _titles(site, "ex") == Counter({"ex-1": 1})
    credential = resolve_credential(journal, outcome.run_id, None)
    with pytest.raises(RunBlocked):  # unknown: no resume before it is reconciled
        await resume_program(
            outcome.run_id, credential, broker.request, broker.declaration,
            host=host, journal=journal,
        )  # fmt: skip
    # The probe finds the post: the resumed program's submission is answered from the record.
    resumed = await _reconcile_and_resume(broker, outcome.run_id)
    assert resumed.status == "verified", resumed.results
    assert _titles(site, "ex") == Counter({"ex-1": 1})


async def test_a_program_that_exits_non_zero_before_any_submission_fails_not_unknown(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    body = 'await nx.tab("site").fill({"label": "Title"}, "draft")\nraise SystemExit(3)'
    program = _program(tmp_path, body)
    outcome = await _broker(program, site, host, journal, "nz", repeat=2).run()
    assert isinstance(outcome.error, ProgramIterationNotVerified)
    assert outcome.status == "failed"  # as a recipe: the loop ends, no next iteration
    assert [r.state.value for r in outcome.results] == ["failed"]
    state, code, reason = _iteration(journal, outcome.run_id, 1)
    assert (state, code) == ("failed", "PROGRAM_FAILED")
    assert "exited with status 3" in reason
    assert journal.open_submissions(outcome.run_id, 1) == []
    record = journal.run_record(outcome.run_id)
    states = journal.iteration_states(outcome.run_id)
    assert remaining_iterations(record, states, journal) == [1, 2]  # resumable, not blocked
    assert site.submission_count("post") == 0


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(HANG, id="hangs-mid-iteration"),
        pytest.param(None, id="never-connects"),
    ],
)
async def test_a_silent_program_is_ended_at_its_time_limit_and_fails(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal, body: str | None
) -> None:
    if body is None:
        program = _program(tmp_path, "await nx.complete()", timeout_s=1)
        # Silent before main (loading the module blocks), so it never connects to the host.
        program.write_text(NEVER_CONNECTS + program.read_text())
    else:
        body = 'await nx.tab("site").fill({"label": "Title"}, "draft")\n' + body
        program = _program(tmp_path, body, timeout_s=1)
    outcome = await _broker(program, site, host, journal, "tl").run()
    assert outcome.status == "failed"
    [result] = outcome.results
    assert result.reason_code == "PROGRAM_TIMED_OUT", result.reason
    assert "made no call for 1 s and was ended" in (result.reason or "")
    assert journal.open_submissions(outcome.run_id, 1) == []


def silent_once_posted(site: FixtureSite) -> Any:
    """``ChildRun.silent_for`` on the test's clock: the program counts as silent for its
    limit once the site has the post and no call is being done, however long the program
    took to start and submit on a busy machine (a 1 s wall-clock limit could end it first)."""

    async def silent_for(child: ChildRun, limit_s: float) -> None:
        while child.busy or site.submission_count("post") == 0:
            await child.activity.wait()
            child.activity.clear()

    return silent_for


async def test_a_program_silent_with_a_submission_open_is_ended_and_unknown(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal, monkeypatch: Any
) -> None:
    body = "try:\n" + "\n".join("    " + line for line in _submit(NEVER).strip().splitlines())
    body += "\nexcept Exception:\n    pass\n" + HANG
    program = _program(tmp_path, body, timeout_s=1)
    monkeypatch.setattr(ChildRun, "silent_for", silent_once_posted(site))
    outcome = await _broker(program, site, host, journal, "so").run()
    assert outcome.status == "blocked"
    [result] = outcome.results
    assert result.state.value == "unknown"
    assert result.reason_code == "OUTCOME_UNKNOWN"
    assert "made no call for 1 s" in (result.reason or "")
    assert _titles(site, "so") == Counter({"so-1": 1})
