"""``pip install 'northstar[pytest]'`` into an ordinary Playwright pytest project, then ``pytest``.

For each of pytest-playwright (sync ``page``) and pytest-playwright-asyncio (async ``page``)
a fresh virtual environment is made; the project installs its plugin and passes its own
test first, as it did before Northstar; then Northstar is installed by name with its
``pytest`` extra (from this checkout) and plain ``pytest`` runs the project's test and a
recorded Northstar case in one session, in both orders. The sync environment also runs
the case with the plugin blocked (``-p no:playwright``): Northstar's plugin alone.

Slow (two environments, about 15 s each with pip's cache warm, more with a cold one):
marked ``install``, so ``scripts/test.sh`` runs it and ``-m "not install"`` leaves it out
while iterating.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from browser_adapters.discovery import find_browser
from fixtures.site_server import FixtureSite
from northstar.cases.record_replay import record_case
from tests.conftest import REPO

pytestmark = [pytest.mark.install, pytest.mark.browser]

RECIPE = """\
name: greeting
version: 1
tabs:
  site:
    start: "{{ base_url }}/browser"
steps:
  - id: facts
    tab: site
    verify_outcome: {visible: {role: heading, name: Browser facts}}
outputs:
  title: {tab: site, from: title}
"""

CONFTEST = """\
import os

import pytest


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": os.environ["CHROMIUM"]}
"""

SYNC_TEST = """\
def test_the_page_has_its_title(page, base_url):
    page.goto(base_url + "/browser")
    assert page.title() == "Browser facts"
"""

ASYNC_TEST = """\
async def test_the_page_has_its_title(page, base_url):
    await page.goto(base_url + "/browser")
    assert await page.title() == "Browser facts"
"""

ASYNC_PYPROJECT = """\
[tool.pytest.ini_options]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "session"
asyncio_default_test_loop_scope = "session"
"""

PLUGINS = {"pytest-playwright": SYNC_TEST, "pytest-playwright-asyncio": ASYNC_TEST}


@pytest.fixture(scope="module")
async def recorded_case(tmp_path_factory: pytest.TempPathFactory, site_server: FixtureSite) -> Path:
    """A case recorded live once; each project gets a copy under ``cases/greeting``."""
    root = tmp_path_factory.mktemp("recorded")
    (root / "recipes").mkdir()
    (root / "recipes" / "greeting.yaml").write_text(RECIPE)
    recorded = await record_case(
        root / "recipes" / "greeting.yaml", {}, to=root / "cases" / "greeting",
        base_url=site_server.base_url,
    )  # fmt: skip
    assert recorded.case is not None
    assert recorded.case.outputs == {"title": "Browser facts"}
    return root


class Project:
    """A project folder with a virtual environment of its own."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.venv = root / ".venv"
        subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)

    def env(self) -> dict[str, str]:
        skip = ("NORTHSTAR_", "PYTEST_", "VIRTUAL_ENV", "PYTHONPATH")
        env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["CHROMIUM"] = find_browser() or ""
        return env

    def run(self, *command: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.venv / "bin" / command[0]), *command[1:]],
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def pip_install(self, *requirements: str) -> None:
        done = self.run("python", "-m", "pip", "install", "--quiet", *requirements)
        assert done.returncode == 0, done.stdout + done.stderr

    def pytest(self, *args: str) -> subprocess.CompletedProcess[str]:
        ran = self.run("pytest", "-p", "no:cacheprovider", *args)
        assert "Traceback" not in ran.stderr, ran.stderr
        return ran


@pytest.fixture(scope="module", params=sorted(PLUGINS))
def project(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, recorded_case: Path
) -> Iterator[tuple[str, Project]]:
    """An ordinary project of one plugin, with Northstar installed into it afterwards."""
    plugin: str = request.param
    root = tmp_path_factory.mktemp(plugin)
    (root / "tests").mkdir()
    (root / "tests" / "test_page.py").write_text(PLUGINS[plugin])
    (root / "conftest.py").write_text(CONFTEST)
    if plugin.endswith("asyncio"):
        (root / "pyproject.toml").write_text(ASYNC_PYPROJECT)
    shutil.copytree(recorded_case / "recipes", root / "recipes")
    shutil.copytree(recorded_case / "cases", root / "cases")
    made = Project(root)
    made.pip_install(plugin)
    yield plugin, made
    shutil.rmtree(made.venv, ignore_errors=True)


def test_the_project_then_northstar_in_one_session_in_both_orders(
    project: tuple[str, Project], site: FixtureSite
) -> None:
    plugin, made = project
    before = made.pytest("--base-url", site.base_url, "tests")
    assert before.returncode == 0, before.stdout + before.stderr  # the project as it was

    made.pip_install(f"{REPO}[pytest]")
    assert made.run("python", "-m", "pip", "check").returncode == 0
    page_test = "tests/test_page.py::test_the_page_has_its_title[chromium]"  # per browser
    case = "cases/greeting/case.json::greeting"
    for order, expected in (
        (["tests", "cases"], [page_test, case]),
        (["cases", "tests"], [case, page_test]),
    ):
        ran = made.pytest("--base-url", site.base_url, "-v", *order)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "2 passed" in ran.stdout, ran.stdout
        assert _passed(ran.stdout) == expected

    # The project's plugin blocked: Northstar's plugin alone registers the options it reads.
    blocked = "playwright" if plugin == "pytest-playwright" else "playwright-asyncio"
    alone = made.pytest("-v", "-p", f"no:{blocked}", "--tracing", "on", "cases")
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert _passed(alone.stdout) == [case]


def _passed(report: str) -> list[str]:
    return [line.split(" ")[0] for line in report.splitlines() if " PASSED" in line]
