"""pytest plugin: every recorded regression case is a test, replayed offline.

Registered as the ``pytest11`` entry point ``northstar``. A ``case.json`` written by
``northstar record`` becomes one test item named after its folder, wherever pytest
collects (``pytest fixtures/cases``, or ``testpaths``); other projects' ``case.json``
files are left alone. Each item replays its case with no network (``--replay``) and
fails when the iteration does not verify or its outputs differ from the recording; the
failure names the step, what the recipe expected, what was found, and where to look.

It honours pytest-playwright's options where they apply, and registers them itself when
pytest-playwright is not active: ``--headed``, ``--slowmo MS``,
``--tracing on|off|retain-on-failure``, ``--screenshot on|off|only-on-failure`` and
``--output DIR`` (artifacts go to ``DIR/<test id>/``, as pytest-playwright does). A
case with secret parameters takes their values from ``NORTHSTAR_SECRET_<NAME>``.

Importing this module loads neither Playwright nor the runner: pytest imports every
installed plugin at start-up, so the work happens only when a case runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from northstar.browser_settings import BrowserSettings
from northstar.cases.manifest import is_case_file

if TYPE_CHECKING:
    from browser_adapters import PlaywrightHost
    from northstar.cases.results import CaseReplay

__all__ = ["CaseFailed", "CaseFile", "CaseItem"]

_MARKER = "northstar_case"

# pytest-playwright's options that mean something for a replayed case, as it defines them.
_PLAYWRIGHT_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--headed", {"action": "store_true", "default": False, "help": "Run tests in headed mode."}),
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


class CaseItem(pytest.Item):
    """Replays one case in a fresh context of the session's Chromium (``--headed`` shows it)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_marker(_MARKER)
        if _declares_marker(self.config, "browser"):
            self.add_marker("browser")  # so `-m "not browser"` skips cases in such projects

    def runtest(self) -> None:
        from northstar.browser_settings import DebugSettings
        from northstar.cases.record_replay import replay_case

        _quiet_logs()
        option = self.config.getoption
        artifacts = self.artifacts_dir()
        shutil.rmtree(artifacts, ignore_errors=True)  # a trace of an earlier run misleads
        browser = BrowserSettings(debug=DebugSettings(trace=option("--tracing")))
        replay = _shared_browser(self.config).run(
            lambda host: replay_case(
                self.path.parent,
                artifacts=artifacts,
                browser=browser,
                screenshots=option("--screenshot"),
                shared=host,
            )
        )
        _drop_if_empty(artifacts)
        if not replay.passed:
            raise CaseFailed(replay)

    def artifacts_dir(self) -> Path:
        """``--output``/<test id>/, the layout pytest-playwright uses."""
        slug = re.sub(r"[^A-Za-z0-9]+", "-", self.nodeid).strip("-")
        return Path(str(self.config.getoption("--output"))).resolve() / slug

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        from northstar.errors import NorthstarError

        error = excinfo.value
        if isinstance(error, CaseFailed):
            return error.replay.explain()
        if isinstance(error, NorthstarError):  # the case could not even start (a secret...)
            return f"error[{error.code}] {error.where()}{error.message} (fix: {error.fix})"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"northstar case {self.name}"


class _SharedBrowser:
    """One Chromium for every case of the session, on an event loop of its own.

    Launching is the expensive part of a replay; each case still gets a fresh context.
    The loop is separate so that pytest-asyncio's loop (and its tests) are left alone.
    """

    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        self._runner = asyncio.Runner(loop_factory=asyncio.new_event_loop)
        self._host: PlaywrightHost | None = None

    def run(self, work: Callable[[PlaywrightHost], Coroutine[Any, Any, Any]]) -> Any:
        if self._host is None:
            self._host = self._runner.run(self._launch())
        return self._runner.run(work(self._host))

    async def _launch(self) -> PlaywrightHost:
        from browser_adapters import PlaywrightHost

        host = PlaywrightHost(
            BrowserSettings(
                executable=os.environ.get("NORTHSTAR_BROWSER") or None,
                headless=not self._config.getoption("--headed"),
                slow_mo_ms=self._config.getoption("--slowmo") or 0,
            )
        )
        return await host.__aenter__()

    def close(self) -> None:
        if self._host is not None:
            self._runner.run(self._host.__aexit__(None, None, None))
            self._host = None
        self._runner.close()


_SHARED = pytest.StashKey[_SharedBrowser]()


def _shared_browser(config: pytest.Config) -> _SharedBrowser:
    if _SHARED not in config.stash:
        shared = config.stash[_SHARED] = _SharedBrowser(config)
        config.add_cleanup(shared.close)
    return config.stash[_SHARED]


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
