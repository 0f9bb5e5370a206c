"""pytest plugin: every recorded regression case is a test, replayed offline.

Registered as the ``pytest11`` entry point ``northstar``. A ``case.json`` written by
``northstar record`` becomes one test item named after its folder, wherever pytest
collects (``pytest fixtures/cases``, or ``testpaths``); other projects' ``case.json``
files are left alone. Each item replays its case with no network (``--replay``) and
fails when the iteration does not verify or its outputs differ from the recording; the
failure names the step, what the recipe expected, what was found, and where to look.

It honours pytest-playwright's options and fixtures where they apply (its
``browser_type_launch_args`` launches the cases' browser), and registers the options
itself when pytest-playwright is not active: ``--headed``, ``--browser-channel``, ``--slowmo MS``,
``--tracing on|off|retain-on-failure``, ``--screenshot on|off|only-on-failure`` and
``--output DIR`` (artifacts go to ``DIR/<test id>/``, as pytest-playwright does). A
case with secret parameters takes their values from ``NORTHSTAR_SECRET_<NAME>``. The
``northstar_recipe`` fixture (``recipe_fixture``) is registered here too.

Importing this module loads neither Playwright nor the runner: pytest imports every
installed plugin at start-up, so the work happens only when a case runs.
"""

from __future__ import annotations

import argparse
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from northstar.browser.settings import BrowserSettings
from northstar.cases.manifest import is_case_file
from northstar.cases.recipe_fixture import northstar_recipe
from northstar.cases.shared_browser import fixture_or, launch_settings, session_browser

if TYPE_CHECKING:
    from northstar.cases.results import CaseReplay

__all__ = ["CaseFailed", "CaseFile", "CaseItem", "northstar_recipe"]

_MARKER = "northstar_case"

# pytest-playwright's options that mean something for a replayed case, as it defines them.
_PLAYWRIGHT_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--headed", {"action": "store_true", "default": False, "help": "Run tests in headed mode."}),
    ("--browser-channel", {"default": None, "help": "Browser channel to be used."}),
    ("--slowmo", {"default": 0, "type": int, "help": "Run tests with slow mo"}),
    (
        "--output",
        {"default": "test-results", "help": "Directory for artifacts produced by tests."},
    ),
    (
        "--tracing",
        {
            "default": "off",
            "choices": ["on", "off", "retain-on-failure"],
            "help": "Whether to record a trace for each test.",
        },
    ),
    (
        "--screenshot",
        {
            "default": "off",
            "choices": ["on", "off", "only-on-failure"],
            "help": "Whether to automatically capture a screenshot after each test.",
        },
    ),
)


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Iterator[None]:
    """Add pytest-playwright's options unless a plugin already did.

    Every plugin (entry points, ``-p``, initial conftests) is registered once this hook
    has run, and the command line is parsed after it: the one point where "already
    registered" can be known for sure, whatever order the plugins loaded in.
    """
    yield
    group = parser.getgroup("playwright", "Playwright")
    for name, attrs in _PLAYWRIGHT_OPTIONS:
        try:
            group.addoption(name, **attrs)
        except (ValueError, argparse.ArgumentError):
            continue  # pytest-playwright (or another plugin) owns it: use theirs


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{_MARKER}: a recorded Northstar regression case, replayed offline"
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseFile | None:
    if file_path.name == "case.json" and is_case_file(file_path):
        file: CaseFile = CaseFile.from_parent(parent, path=file_path)
        return file
    return None


class CaseFile(pytest.File):
    """A ``case.json``: one item, named after the case's folder."""

    def collect(self) -> Iterator[CaseItem]:
        yield CaseItem.from_parent(self, name=self.path.parent.name)


class CaseFailed(Exception):
    """The replay did not verify, or its outputs differ from the recording."""

    def __init__(self, replay: CaseReplay) -> None:
        super().__init__(replay.explain())
        self.replay = replay


class CaseItem(pytest.Function):
    """Replays one case in a fresh context of the session's Chromium (``--headed`` shows it).

    A ``pytest.Function`` (its function is ``_replay``) so that fixtures reach it:
    pytest-playwright's ``browser_type_launch_args`` (``--browser-channel``, ``--headed``,
    ``--slowmo`` and a conftest's overrides), its ``output_path``, and its autouse
    ``--output`` cleanup, which then runs before the first case writes anything there.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(callobj=_replay, **kwargs)
        self.add_marker(_MARKER)
        if _declares_marker(self.config, "browser"):
            self.add_marker("browser")  # so `-m "not browser"` skips cases in such projects

    @property
    def case_dir(self) -> Path:
        return self.path.parent

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        from northstar.errors import NorthstarError, error_line

        error = excinfo.value
        if isinstance(error, CaseFailed):
            return error.replay.explain()
        if isinstance(error, NorthstarError):  # the case could not even start (a secret...)
            return error_line(error)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"northstar case {self.name}"


def _replay(request: pytest.FixtureRequest) -> None:
    """The test function of every ``CaseItem``: replay its case, raise ``CaseFailed``."""
    from northstar.browser.settings import DebugSettings
    from northstar.cases.record_replay import replay_case

    item = request.node
    assert isinstance(item, CaseItem)
    _quiet_logs()
    option = item.config.getoption
    artifacts = _artifacts_dir(request)
    shutil.rmtree(artifacts, ignore_errors=True)  # a trace of an earlier run misleads
    browser = BrowserSettings(debug=DebugSettings(trace=option("--tracing")))
    replay = session_browser(item.config).run(
        lambda: launch_settings(request),
        lambda host: replay_case(
            item.case_dir,
            artifacts=artifacts,
            browser=browser,
            screenshots=option("--screenshot"),
            shared=host,
        ),
    )
    _drop_if_empty(artifacts)
    if not replay.passed:
        raise CaseFailed(replay)


def _artifacts_dir(request: pytest.FixtureRequest) -> Path:
    """pytest-playwright's ``output_path`` (``--output``/<test id>/), or the same by hand."""
    given = fixture_or(request, "output_path", None)
    if given is not None:
        return Path(given).resolve()
    slug = re.sub(r"[^A-Za-z0-9]+", "-", request.node.nodeid).strip("-")
    return Path(str(request.config.getoption("--output"))).resolve() / slug


def _quiet_logs() -> None:
    """Northstar logs warnings only (on stderr), unless the project configured structlog."""
    import structlog

    from northstar.logs import configure_logging

    if not structlog.is_configured():
        configure_logging()


def _declares_marker(config: pytest.Config, name: str) -> bool:
    lines = config.getini("markers")
    return any(str(line).split(":")[0].strip() == name for line in lines)


def _drop_if_empty(folder: Path) -> None:
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
