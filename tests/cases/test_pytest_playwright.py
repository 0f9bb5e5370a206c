"""Recorded cases and ``northstar_recipe`` in a pytest-playwright project, as a user runs it.

A project under a temporary folder has its own conftest (pytest-playwright's
``browser_type_launch_args`` overridden: this machine's Chromium and a
``--user-agent`` flag), a recipe that reads ``navigator.userAgent`` from the fixture
site's ``/browser`` page, two copies of a case recorded from it with that flag (a replay
without the flag reads Chromium's own agent and fails on its output), sync tests for
pytest-playwright and async tests for pytest-playwright-asyncio. The two plugins refuse to
load together, so each runs in its own pytest process, with a case before and after its tests.
On a sync page the fixture runs the recipe beside the page, in a context that starts from
the page's storage state: a sign-in on the test's page (an HttpOnly session cookie) reaches
a recipe that reads the account page.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from browser_adapters.discovery import find_browser
from fixtures.site_server import FixtureSite
from northstar.browser.settings import BrowserSettings
from northstar.cases.record_replay import record_case

pytestmark = pytest.mark.browser

RECIPE = """\
name: browser-agent
version: 1
tabs:
  site:
    start: "{{ base_url }}/browser"
steps:
  - id: facts
    tab: site
    verify_outcome: {visible: {role: heading, name: Browser facts}}
outputs:
  agent: {tab: site, from: text, target: {test_id: user-agent}}
"""

BROKEN = RECIPE.replace(
    "verify_outcome: {visible: {role: heading, name: Browser facts}}",
    "verify_outcome: {visible: {role: heading, name: Browser fiction}}\n    timeout: 400",
)

ACCOUNT = """\
name: account
version: 1
tabs:
  site:
    start: "{{ base_url }}/account"
steps:
  - id: account
    tab: site
    verify_outcome: {title: {equals: Account}}
outputs:
  who: {tab: site, from: text, target: {text: "Signed in as", exact: false}}
"""

CONFTEST = """\
import os

import pytest


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    given = {**browser_type_launch_args, "args": ["--user-agent=NorthstarProbe/1"]}
    if not given.get("channel"):  # a --browser-channel names its own browser
        given["executable_path"] = os.environ["CHROMIUM"]
    return given
"""

SYNC_TESTS = """\
def test_page_has_the_agent(page, base_url):
    page.goto(base_url + "/browser")
    assert page.get_by_test_id("user-agent").inner_text() == "NorthstarProbe/1"


def test_recipe_beside_sync_page(page, northstar_recipe):
    outputs = northstar_recipe(page, "recipes/agent.yaml")
    assert outputs == {"agent": "NorthstarProbe/1"}  # launched with the project's arguments
    assert page.url == "about:blank"  # the test's page stayed where it was


def test_recipe_starts_from_the_sync_pages_sign_in(page, base_url, northstar_recipe):
    page.goto(base_url + "/login?next=/account")
    page.get_by_label("Username").fill("demo")
    page.get_by_label("Password").fill("demo-password")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/account")
    assert northstar_recipe(page, "recipes/account.yaml") == {"who": "Signed in as demo"}


def test_broken_recipe_on_sync_page(page, northstar_recipe):
    northstar_recipe(page, "recipes/broken.yaml")
"""

ASYNC_TESTS = """\
async def test_page_has_the_agent(page, base_url):
    await page.goto(base_url + "/browser")
    assert await page.get_by_test_id("user-agent").inner_text() == "NorthstarProbe/1"


async def test_recipe_on_async_page(page, northstar_recipe):
    outputs = await northstar_recipe(page, "recipes/agent.yaml")
    assert outputs == {"agent": "NorthstarProbe/1"}
    assert page.url.endswith("/browser")
"""

PYPROJECT = """\
[tool.pytest.ini_options]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "session"
asyncio_default_test_loop_scope = "session"
"""


@pytest.fixture(scope="module")
async def project(tmp_path_factory: pytest.TempPathFactory, site_server: FixtureSite) -> Path:
    """The project, with its case recorded live once (with the user agent flag)."""
    root = tmp_path_factory.mktemp("pw-project")
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "conftest.py").write_text(CONFTEST)
    (root / "recipes").mkdir()
    (root / "recipes" / "agent.yaml").write_text(RECIPE)
    (root / "recipes" / "broken.yaml").write_text(BROKEN)
    (root / "recipes" / "account.yaml").write_text(ACCOUNT)
    (root / "tests").mkdir()
    (root / "tests" / "test_sync.py").write_text(SYNC_TESTS)
    (root / "tests" / "test_async.py").write_text(ASYNC_TESTS)
    probe = BrowserSettings(extra_args=("--user-agent=NorthstarProbe/1",))
    recorded = await record_case(
        root / "recipes" / "agent.yaml",
        {},
        to=root / "cases" / "first",
        base_url=site_server.base_url,
        browser=probe,
    )
    assert recorded.case is not None
    assert recorded.case.outputs == {"agent": "NorthstarProbe/1"}
    copy_case(root / "cases" / "first", root / "cases" / "last")
    return root


def copy_case(source: Path, to: Path) -> None:
    shutil.copytree(source, to)
    manifest = json.loads((to / "case.json").read_text())
    (to / "case.json").write_text(json.dumps({**manifest, "name": to.name}))


def pytest_in(project: Path, site: FixtureSite, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NORTHSTAR_", "PYTEST_"))}
    env["CHROMIUM"] = find_browser() or ""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    return subprocess.run(
        [*command, "--base-url", site.base_url, *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_sync_page_tests_and_cases_share_a_session(project: Path, site: FixtureSite) -> None:
    ran = pytest_in(
        project,
        site,
        *("-p", "no:playwright-asyncio", "--tracing", "on", "--output", "out", "-v"),
        *("cases/first", "tests/test_sync.py", "cases/last"),
    )
    report = ran.stdout
    assert ran.returncode == 1, report + ran.stderr
    assert "1 failed, 5 passed" in report
    lines = [line for line in report.splitlines() if " PASSED" in line or " FAILED" in line]
    assert [line.split(" ")[0] for line in lines] == [
        "cases/first/case.json::first",
        "tests/test_sync.py::test_page_has_the_agent[chromium]",
        "tests/test_sync.py::test_recipe_beside_sync_page[chromium]",
        "tests/test_sync.py::test_recipe_starts_from_the_sync_pages_sign_in[chromium]",
        "tests/test_sync.py::test_broken_recipe_on_sync_page[chromium]",
        "cases/last/case.json::last",
    ]
    assert "FAILED tests/test_sync.py::test_broken_recipe_on_sync_page" in report
    assert "recipe broken.yaml did not verify beside the test's page: " in report
    assert '    expected: visible heading "Browser fiction"' in report
    assert "    found:    " in report
    out = project / "out"
    # The cases' traces survive pytest-playwright's --output cleanup, beside its own.
    assert (out / "cases-first-case-json-first" / "iteration-0001-trace.zip").is_file()
    assert (out / "cases-last-case-json-last" / "iteration-0001-trace.zip").is_file()
    assert (out / "tests-test-sync-py-test-page-has-the-agent-chromium" / "trace.zip").is_file()


def test_async_page_tests_and_cases_share_a_session(project: Path, site: FixtureSite) -> None:
    ran = pytest_in(
        project,
        site,
        *("-p", "no:playwright", "-v"),
        *("cases/first", "tests/test_async.py", "cases/last"),
    )
    report = ran.stdout
    assert ran.returncode == 0, report + ran.stderr
    assert "4 passed" in report


def test_browser_channel_reaches_the_case(project: Path, site: FixtureSite) -> None:
    # No msedge here: the case's launch fails, naming the channel it was told to use.
    ran = pytest_in(
        project, site, "-p", "no:playwright-asyncio", "--browser-channel", "msedge", "cases/first"
    )
    report = ran.stdout
    assert ran.returncode == 1, report + ran.stderr
    assert "error[BROWSER_NOT_FOUND] Chromium at channel 'msedge' did not start" in report
