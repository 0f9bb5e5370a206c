"""The pytest plugin as a user meets it: pytest in a separate process on a project of cases.

The project under ``tmp_path`` holds two copies of the recorded contact-form case: one
replays its own recipe, the other a recipe whose Send button was renamed (a deliberate
failure). pytest runs there without pytest-playwright, so the plugin registers
pytest-playwright's options itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RECIPES, REPO

CASE = REPO / "fixtures" / "cases" / "contact-form"


def pytest_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NORTHSTAR_", "PYTEST_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def copy_case(project: Path, name: str, recipe: str) -> None:
    folder = project / "cases" / name
    shutil.copytree(CASE, folder)
    manifest = json.loads((folder / "case.json").read_text())
    manifest.update(name=name, recipe=recipe)
    (folder / "case.json").write_text(json.dumps(manifest, indent=2))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a passing case (``ok``) and a failing one (``broken``)."""
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    shutil.copytree(RECIPES / "files", tmp_path / "recipes" / "files")
    text = (RECIPES / "contact-form.yaml").read_text()
    (tmp_path / "recipes" / "contact-form.yaml").write_text(text)
    broken = text.replace(
        "click: {target: {role: button, name: Send}}",
        "click: {target: {role: button, name: Dispatch}}\n    timeout: 400",
    )
    (tmp_path / "recipes" / "broken.yaml").write_text(broken)
    copy_case(tmp_path, "ok", "recipes/contact-form.yaml")
    copy_case(tmp_path, "broken", "recipes/broken.yaml")
    return tmp_path


def test_recorded_cases_are_collected_as_items(project: Path) -> None:
    # pytest-playwright-asyncio is active here: its options exist and ours must not clash.
    found = pytest_in(project, "-p", "no:playwright", "--collect-only", "-q", "--tracing", "on")
    assert found.returncode == 0, found.stdout + found.stderr
    assert "cases/broken/case.json::broken" in found.stdout
    assert "cases/ok/case.json::ok" in found.stdout
    repo = pytest_in(REPO, "--collect-only", "-q", "fixtures/cases")
    assert repo.returncode == 0, repo.stdout + repo.stderr
    for name in ("contact-form", "login", "members-note", "popup-chooser", "publish-post"):
        assert f"fixtures/cases/{name}/case.json::{name}" in repo.stdout


@pytest.mark.browser
def test_a_failing_case_explains_itself_and_keeps_its_trace(project: Path) -> None:
    ran = pytest_in(
        project, "-p", "no:playwright-asyncio", "--tracing", "retain-on-failure", "--output", "out"
    )
    report = ran.stdout
    assert ran.returncode == 1, report + ran.stderr
    assert "1 failed, 1 passed" in report
    assert "replay of case 'broken' failed: TARGET_MISSING at step 'send'" in report
    assert 'expected: click button "Dispatch"\n' in report
    assert 'found:    no element matches button "Dispatch" (waited 400 ms' in report
    assert "cases/broken/step-06-attach.html" in report  # the page before the step, recorded
    failed = project / "out" / "cases-broken-case-json-broken"
    assert (failed / "iteration-0001-trace.zip").is_file()
    assert f"artifacts of this replay: {failed}/" in report
    assert not (project / "out" / "cases-ok-case-json-ok").exists()  # verified: no trace kept
