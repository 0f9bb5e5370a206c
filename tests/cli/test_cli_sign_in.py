"""``northstar sign-in`` and ``run --state`` / ``--keep-state`` in processes of their own.

Real headless Chromium against the fixture site's login-walled notes; the server's login
counter is the oracle. Every file the commands leave (journal, WAL, artifacts, report)
and every stdout and stderr is scanned, in every encoding, for the session cookie's value
and the password: the saved state is the one place the cookie may be.
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import northstar
from tests.core.test_redaction import every_form

pytestmark = pytest.mark.browser

RECIPE = Path(__file__).parents[2] / "recipes" / "members-note.yaml"
PASSWORD = {"NORTHSTAR_SECRET_PASSWORD": "demo-password"}


def session_cookie(state_file: Path) -> str:
    cookies = json.loads(state_file.read_text())["cookies"]
    return str(next(c["value"] for c in cookies if c["name"] == "northstar_session"))


def assert_nowhere(secret: str, folder: Path, outputs: list[str], *, but: Path) -> None:
    forms = set(every_form(secret).values())
    for path in folder.rglob("*"):
        if path.is_file() and path != but:
            data = path.read_bytes()
            assert not any(form.encode() in data for form in forms), path
    for text in outputs:
        assert not any(form in text for form in forms)


def test_sign_in_saves_a_private_state_that_runs_start_from_without_logging_in(
    site: FixtureSite, tmp_path: Path
) -> None:
    state = tmp_path / "state.json"
    signed = northstar(
        "sign-in", str(RECIPE), "--save-state", str(state), "--base-url", site.base_url,
        cwd=tmp_path, extra_env=PASSWORD,
    )  # fmt: skip
    assert signed.returncode == 0, signed.stderr
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert site.login_count() == 1

    ran = northstar(
        "-v", "run", str(RECIPE), "--state", str(state), "-p", "title=From state",
        "--repeat", "3", "--base-url", site.base_url, cwd=tmp_path, extra_env=PASSWORD,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert site.login_count() == 1  # the saved state held: setup did not run
    assert site.submission_count("note") == 3
    run_id = re.search(r"r-[0-9a-f]{12}", ran.stderr + ran.stdout)
    assert run_id is not None
    report = northstar("report", run_id.group(0), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    outputs = [signed.stdout, signed.stderr, ran.stdout, ran.stderr, report.stdout, report.stderr]
    assert_nowhere(session_cookie(state), tmp_path, outputs, but=state)
    assert_nowhere("demo-password", tmp_path, outputs, but=state)


def test_run_keeps_its_state_only_when_asked_and_a_stale_state_signs_in_again(
    site: FixtureSite, tmp_path: Path
) -> None:
    kept = tmp_path / "kept.json"
    ran = northstar(
        "run", str(RECIPE), "-p", "title=Kept", "--keep-state", str(kept),
        "--base-url", site.base_url, cwd=tmp_path, extra_env=PASSWORD,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert not list((tmp_path / "runs").glob("*/signed-in-*.json"))  # the held one is gone

    site.expire_sessions()
    again = northstar(
        "run", str(RECIPE), "--state", str(kept), "-p", "title=Again",
        "--base-url", site.base_url, cwd=tmp_path, extra_env=PASSWORD,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert site.login_count() == 2  # the stale state failed `signed_in`: setup ran once


def test_a_sign_in_that_fails_exits_10_with_sign_in_failed(
    site: FixtureSite, tmp_path: Path
) -> None:
    ran = northstar(
        "run", str(RECIPE), "-p", "title=Never", "--base-url", site.base_url,
        cwd=tmp_path, extra_env={"NORTHSTAR_SECRET_PASSWORD": "wrong-password"},
    )  # fmt: skip
    assert ran.returncode == 10, ran.stdout + ran.stderr
    assert "SIGN_IN_FAILED" in ran.stdout + ran.stderr
    assert site.submission_count() == 0
