"""A program's ``setup``: signed in once per run, in real Chromium, on the members notes.

The example program ``examples/programs/members_notes.py`` saves one note per iteration
in the fixture site's login-walled members area. The server is the oracle: it counts
logins and records, with each saved note, the signed-in user and whether the request
carried the ``last_note`` cookie the previous save set. Expiry is triggered between
iterations from ``on_result``, so nothing races a clock.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.composition import resolve_credential
from northstar.journal import Journal
from northstar.programs import ProgramBroker, load_program
from northstar.programs.recovery import reconcile_program, resume_program
from northstar.results import IterationResult
from northstar.run.execution import RunOutcome
from tests.cli.test_cli_run import northstar
from tests.programs.conftest import program_request
from tests.programs.test_program_ends import _kill_and_wait

pytestmark = pytest.mark.browser

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "programs" / "members_notes.py"
PASSWORD = "demo-password"


def _broker(
    site: FixtureSite, journal: Journal, count: int, *, password: str = PASSWORD, **extra: Any
) -> ProgramBroker:
    declaration, _ = load_program(EXAMPLE)
    request = program_request(EXAMPLE, site.base_url, repeat=count, params={"password": password})
    return ProgramBroker(request, declaration, journal=journal, **extra)


def _notes(site: FixtureSite) -> list[dict[str, str]]:
    return [s for s in site.submissions() if s["kind"] == "note"]


def _events(journal: Journal, outcome: RunOutcome) -> list[str]:
    return [e.name for e in readers.get_run(journal.path, outcome.run_id).events]


def _held(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "runs").glob("*/signed-in-*.json"))


async def test_three_iterations_log_in_once_each_in_a_fresh_signed_in_context(
    host: Any, site: FixtureSite, journal: Journal, tmp_path: Path
) -> None:
    outcome = await _broker(site, journal, 3, host=host).run()

    assert outcome.status == "verified", outcome.results
    assert site.login_count() == 1  # the declaration's setup, once for the run
    notes = _notes(site)
    assert [n["title"] for n in notes] == [f"Program note {i}" for i in (1, 2, 3)]
    assert {n["user"] for n in notes} == {"demo"}  # the sign-in cookie was in every context
    # The cookie iteration 1's save set is gone in iteration 2: each context is fresh.
    assert [n["last_note_cookie"] for n in notes] == ["", "", ""]
    assert _events(journal, outcome).count("setup_ran") == 1
    assert not _held(tmp_path)  # the held state does not outlive the run


async def test_an_expiry_between_iterations_runs_setup_again_once_and_the_run_verifies(
    host: Any, site: FixtureSite, journal: Journal
) -> None:
    def expire_after_first(result: IterationResult) -> None:
        if result.iteration == 1:
            site.expire_sessions()

    outcome = await _broker(site, journal, 3, host=host, on_result=expire_after_first).run()

    assert outcome.status == "verified", outcome.results
    assert site.login_count() == 2  # the first setup, and one after the expiry
    assert len(_notes(site)) == 3
    assert _events(journal, outcome).count("setup_ran") == 2


async def test_a_sign_in_setup_cannot_make_ends_sign_in_failed_with_nothing_sent(
    host: Any, site: FixtureSite, journal: Journal, tmp_path: Path
) -> None:
    outcome = await _broker(site, journal, 3, host=host, password="wrong").run()

    assert outcome.status == "failed"
    assert outcome.error is not None
    assert outcome.error.code == "SIGN_IN_FAILED"
    assert site.submission_count() == 0  # no note was sent
    assert outcome.results == []  # no iteration started
    assert outcome.summary.verified_count == 0
    assert not _held(tmp_path)


async def test_a_sign_in_page_met_mid_iteration_is_signed_out(
    host: Any, site: FixtureSite, journal: Journal
) -> None:
    def expire_before_the_save(point: str, iteration: int) -> None:
        if (point, iteration) == ("before_in_flight", 1):
            site.expire_sessions()  # the save then lands on the sign-in page

    outcome = await _broker(site, journal, 2, host=host, failpoint=expire_before_the_save).run()

    [result] = outcome.results
    assert result.reason_code == "SIGNED_OUT", result.reason
    assert "signed the session out during the iteration" in (result.reason or "")
    assert "submission(s) without a result: submit.members_notes.L" in (result.reason or "")
    assert result.state.value == "unknown"  # the click was sent: reconcile decides
    assert outcome.status == "blocked"
    assert _notes(site) == []


async def test_reconcile_signs_in_to_probe_the_listing_and_resume_goes_on(
    host: Any, site: FixtureSite, journal: Journal
) -> None:
    def kill_the_program(point: str, iteration: int) -> None:
        if (point, iteration) == ("after_dispatch", 1):
            assert broker.program_pid is not None
            _kill_and_wait(broker.program_pid)

    broker = _broker(site, journal, 2, host=host, failpoint=kill_the_program)
    outcome = await broker.run()
    assert outcome.status == "blocked", outcome.results
    assert len(_notes(site)) == 1

    credential = resolve_credential(journal, outcome.run_id, None)
    [decision] = await reconcile_program(
        outcome.run_id, credential, broker.request, host=host, journal=journal
    )
    # Signed out, the probe would land on the sign-in page and never find the note.
    assert [str(v) for _, v in decision.verdicts] == ["found"]
    assert site.login_count() == 2  # the run's setup, and the reconcile's own sign-in
    resumed = await resume_program(
        outcome.run_id, credential, broker.request, broker.declaration, host=host, journal=journal
    )
    assert resumed.status == "verified", resumed.results
    assert [n["title"] for n in _notes(site)] == ["Program note 1", "Program note 2"]


def test_keep_state_then_state_from_the_command_line(site: FixtureSite, tmp_path: Path) -> None:
    env = {"NORTHSTAR_SECRET_PASSWORD": PASSWORD}
    kept = tmp_path / "kept.json"
    ran = northstar(
        "run", str(EXAMPLE), "--repeat", "2", "--keep-state", str(kept),
        "--base-url", site.base_url, cwd=tmp_path, extra_env=env,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert site.login_count() == 1
    assert not _held(tmp_path)

    again = northstar(
        "run", str(EXAMPLE), "--state", str(kept), "-p", "prefix=Again",
        "--base-url", site.base_url, cwd=tmp_path, extra_env=env,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert site.login_count() == 1  # the saved state held: setup did not run
    assert len(_notes(site)) == 3
    cookies = json.loads(kept.read_text())["cookies"]
    token = next(c["value"] for c in cookies if c["name"] == "northstar_session").encode()
    for path in tmp_path.rglob("*"):
        if path.is_file() and path != kept:
            assert token not in path.read_bytes(), path
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path


def test_a_sign_in_that_fails_exits_10_from_the_command_line(
    site: FixtureSite, tmp_path: Path
) -> None:
    ran = northstar(
        "run", str(EXAMPLE), "--base-url", site.base_url,
        cwd=tmp_path, extra_env={"NORTHSTAR_SECRET_PASSWORD": "wrong-password"},
    )  # fmt: skip
    assert ran.returncode == 10, ran.stdout + ran.stderr
    assert "SIGN_IN_FAILED" in ran.stdout + ran.stderr
    assert site.submission_count() == 0
