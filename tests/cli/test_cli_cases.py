"""``northstar record``, ``run --replay``, the debugging options and ``report`` from a shell."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixtures._site_routes import DEMO_PASSWORD
from fixtures.site_server import FixtureSite
from northstar.cli.run_commands import browser_settings
from tests.cli.test_cli_run import northstar, one_error_line
from tests.conftest import RECIPES, REPO

LOGIN_CASE = REPO / "fixtures" / "cases" / "login"


@pytest.mark.browser
def test_record_then_replay_without_the_site_then_report(tmp_path: Path) -> None:
    case = tmp_path / "cases" / "post"
    recipe = str(RECIPES / "publish-post.yaml")
    with FixtureSite() as site:
        made = northstar(
            "record",
            recipe,
            "-p",
            "title=Kept",
            "--base-url",
            site.base_url,
            "--to",
            str(case),
            cwd=tmp_path,
        )
    assert made.returncode == 0, made.stderr
    assert f"recorded case 'post' in {case}" in made.stdout
    assert (case / "case.json").is_file()

    replayed = northstar("run", recipe, "--replay", str(case), cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "iteration 1: verified" in replayed.stdout
    run_id = re.search(r"run (r-[0-9a-f]+)", replayed.stderr)
    assert run_id is not None, replayed.stderr

    written = northstar("report", run_id[1], cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    page = Path(written.stdout.strip())
    assert page == tmp_path / "runs" / run_id[1] / "report.html"
    assert "Kept" in page.read_text()


@pytest.mark.browser
def test_record_signs_in_unrecorded_and_run_replays_it_without_the_password(
    tmp_path: Path,
) -> None:
    case = tmp_path / "cases" / "notes"
    recipe = str(RECIPES / "members-note.yaml")
    with FixtureSite() as site:
        made = northstar(
            "record", recipe, "-p", "title=Kept", "--base-url", site.base_url, "--to", str(case),
            cwd=tmp_path, extra_env={"NORTHSTAR_SECRET_PASSWORD": DEMO_PASSWORD},
        )  # fmt: skip
        assert made.returncode == 0, made.stdout + made.stderr
        assert site.login_count() == 1  # the password came from the environment
    assert "(secret parameters not kept: password); signed in by setup" in made.stdout

    replayed = northstar("run", recipe, "--replay", str(case), cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr  # no sign-in replayed
    assert "iteration 1: verified" in replayed.stdout


def test_a_replay_keeps_the_recorded_base_url(tmp_path: Path) -> None:
    proc = northstar(
        "run",
        str(RECIPES / "login.yaml"),
        "--replay",
        str(LOGIN_CASE),
        "--base-url",
        "http://127.0.0.1:9",
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    one_error_line(proc, "USAGE_INVALID")


def test_a_replay_needs_the_secret_it_never_recorded(tmp_path: Path) -> None:
    proc = northstar("run", str(RECIPES / "login.yaml"), "--replay", str(LOGIN_CASE), cwd=tmp_path)
    assert proc.returncode == 2
    match = one_error_line(proc, "PARAM_MISSING")
    assert "NORTHSTAR_SECRET_PASSWORD" in match["fix"]


def test_recording_over_an_existing_case_needs_force(tmp_path: Path) -> None:
    (tmp_path / "case").mkdir()
    proc = northstar(
        "record",
        str(RECIPES / "login.yaml"),
        "-p",
        "password=x",
        "--base-url",
        "http://127.0.0.1:9",
        "--to",
        str(tmp_path / "case"),
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert "--force" in one_error_line(proc, "USAGE_INVALID")["fix"]


def test_pausing_options_open_a_window_and_tracing_does_not() -> None:
    stepping = browser_settings({"step": True})
    assert not stepping.headless
    assert stepping.debug.step
    assert not browser_settings({"pause_on_failure": True}).headless
    tracing = browser_settings({"trace": "retain-on-failure"})
    assert tracing.headless
    assert tracing.debug.trace == "retain-on-failure"
