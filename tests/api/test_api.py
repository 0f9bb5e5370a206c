"""The Python API as a script author meets it, and the CLI's ``--log-json`` stderr.

The documented script is taken from the Python API reference page itself and run in a
separate process against the fixture site, so the documented example is the one tested.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import northstar
from fixtures.site_server import FixtureSite
from northstar.errors import EventLoopRunning, RecipeInvalid
from northstar.journal import Journal
from tests.cli.test_cli_run import northstar as northstar_cli
from tests.conftest import RECIPES, REPO


def readme_script() -> str:
    """The first python block of the Python API reference page."""
    page = (REPO / "docs" / "reference" / "python-api.md").read_text(encoding="utf-8")
    match = re.search(r"```python[^\n]*\n(.*?)```", page, re.S)
    assert match is not None
    return match[1]


def run_script(script: str, tmp_path: Path, site: FixtureSite) -> subprocess.CompletedProcess[str]:
    """The script in a fresh interpreter, from the repository (its recipe path is relative)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
    env["NORTHSTAR_JOURNAL"] = str(tmp_path / "journal.db")
    return subprocess.run(
        [sys.executable, "-c", script, site.base_url],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.browser
def test_the_readme_script_prints_only_its_own_lines(tmp_path: Path, site: FixtureSite) -> None:
    proc = run_script(readme_script(), tmp_path, site)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert len(lines) == 3, proc.stdout
    run_line = re.fullmatch(r"run (r-[0-9a-f]+): verified", lines[0])
    assert run_line is not None, lines[0]
    assert re.fullmatch(r"1 True \d+", lines[1])
    assert re.fullmatch(r"2 True \d+", lines[2])
    assert site.submission_count() == 2
    with Journal.open(tmp_path / "journal.db") as journal:  # the CLI's journal, the same record
        record = journal.run_record(run_line[1])
    assert record.status == "verified"
    assert record.total_iterations == 2


@pytest.mark.browser
def test_a_logging_config_of_the_script_shows_northstar_events(
    tmp_path: Path, site: FixtureSite
) -> None:
    config = "import logging, sys\nlogging.basicConfig(level=logging.INFO, stream=sys.stderr)\n"
    proc = run_script(config + readme_script(), tmp_path, site)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 3, proc.stdout  # stdout is still the script's
    assert "INFO:northstar." in proc.stderr
    assert "event='iteration_finished'" in proc.stderr


@pytest.mark.browser
def test_log_json_run_writes_only_json_lines_to_stderr(tmp_path: Path, site: FixtureSite) -> None:
    proc = northstar_cli(
        "--log-json",
        "-v",
        "run",
        str(RECIPES / "contact-form.yaml"),
        "--base-url",
        site.base_url,
        "-p",
        "name=Ada",
        "--repeat",
        "2",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    events = [json.loads(line) for line in lines]  # every line is JSON, or this raises
    assert {"step_started", "iteration_finished"} <= {e["event"] for e in events}
    assert len([e for e in events if e["event"] == "iteration_finished"]) == 2
    assert "iteration 2: verified" not in proc.stderr
    assert re.search(r"^run r-[0-9a-f]+: verified, 2 of 2", proc.stdout, re.M), proc.stdout


def test_log_json_error_is_a_json_event_with_its_code(tmp_path: Path) -> None:
    proc = northstar_cli("--log-json", "run", str(tmp_path / "missing.yaml"), cwd=tmp_path)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    event = json.loads(line)
    assert event["event"] == "command_failed"
    assert event["code"] == "RECIPE_INVALID"
    assert event["fix"]


async def test_run_sync_refuses_inside_a_running_event_loop() -> None:
    with pytest.raises(EventLoopRunning) as raised:
        northstar.run_sync(RECIPES / "contact-form.yaml", params={"name": "Ada"})
    assert raised.value.code == "EVENT_LOOP_RUNNING"


def test_load_returns_the_compiled_recipe_and_refuses_a_bad_one(tmp_path: Path) -> None:
    compiled = northstar.load(RECIPES / "contact-form.yaml")
    assert compiled.recipe.name == "contact-form"
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nsteps: 3\n", encoding="utf-8")
    with pytest.raises(RecipeInvalid):
        northstar.load(bad)


def test_bad_params_are_refused_before_any_browser(tmp_path: Path) -> None:
    with pytest.raises(northstar.NorthstarError) as raised:
        northstar.run_sync(RECIPES / "contact-form.yaml", params={"nmae": "Ada"})
    assert raised.value.code == "PARAM_INVALID"
    assert not (tmp_path / "journal.db").exists()


def test_northstar_run_stays_the_api_function_once_the_engine_is_loaded() -> None:
    import northstar.run.execution  # loads the northstar/run/ subpackage

    assert callable(northstar.run)
    assert northstar.run.__module__ == "northstar.api"
