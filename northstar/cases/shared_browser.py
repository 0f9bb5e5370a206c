"""One Chromium for every replayed case of a pytest session, on an event loop in its own thread.

The loop lives in a thread of its own because the main thread may already run one:
Playwright's sync API (pytest-playwright's ``page``) leaves its loop running in the main
thread after the first test that uses it, and ``asyncio.Runner.run()`` refuses to start
inside a running loop. A loop in another thread is indifferent to what the main thread
does, so cases run before, between and after sync and asyncio Playwright tests alike.

``session_browser`` is the session's one ``SharedBrowser`` (kept in pytest's stash), and
``launch_settings`` how it is launched: pytest-playwright's options and fixtures where the
project uses it, the options this plugin registers itself where it does not.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from northstar.browser.settings import BrowserSettings

if TYPE_CHECKING:
    from browser_adapters import PlaywrightHost

__all__ = ["LoopThread", "SharedBrowser", "fixture_or", "launch_settings", "session_browser"]

T = TypeVar("T")


class LoopThread:
    """An event loop running in a daemon thread; ``run`` blocks until a coroutine is done."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="northstar-cases", daemon=True
        )
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


class SharedBrowser:
    """Launched on first use with the session's settings; each case gets a fresh context.

    ``settings`` is read when the first case runs: pytest-playwright's launch options
    (``browser_type_launch_args``) are a fixture, known only once a test asks for it.
    """

    def __init__(self) -> None:
        self._loop: LoopThread | None = None
        self._host: PlaywrightHost | None = None

    def run(
        self,
        settings: Callable[[], BrowserSettings],
        work: Callable[[PlaywrightHost], Coroutine[Any, Any, T]],
    ) -> T:
        if self._loop is None:
            self._loop = LoopThread()
        if self._host is None:
            self._host = self._loop.run(_launch(settings()))
        return self._loop.run(work(self._host))

    def close(self) -> None:
        if self._loop is None:
            return
        if self._host is not None:
            self._loop.run(self._host.__aexit__(None, None, None))
            self._host = None
        self._loop.close()
        self._loop = None


async def _launch(settings: BrowserSettings) -> PlaywrightHost:
    from browser_adapters import PlaywrightHost

    host = PlaywrightHost(settings)
    return await host.__aenter__()


_SHARED = pytest.StashKey[SharedBrowser]()


def session_browser(config: pytest.Config) -> SharedBrowser:
    """The session's one browser for cases and sync-page recipes, closed at the session's end."""
    if _SHARED not in config.stash:
        shared = config.stash[_SHARED] = SharedBrowser()
        config.add_cleanup(shared.close)
    return config.stash[_SHARED]


def fixture_or(request: pytest.FixtureRequest, name: str, default: Any) -> Any:
    """A fixture's value, or ``default`` where no plugin or conftest defines it."""
    try:
        return request.getfixturevalue(name)
    except pytest.FixtureLookupError:
        return default


def launch_settings(request: pytest.FixtureRequest) -> BrowserSettings:
    """The session browser's launch: the options, then ``browser_type_launch_args`` winning."""
    option = request.config.getoption
    channel = option("--browser-channel")
    given = fixture_or(request, "browser_type_launch_args", None)
    if given is None:  # pytest-playwright is not active: its options are ours
        given = {"channel": channel} if channel else {}
    return BrowserSettings(
        executable=os.environ.get("NORTHSTAR_BROWSER") or None,
        headless=not option("--headed") and given.get("headless", True),
        slow_mo_ms=option("--slowmo") or 0,
        launch_options=dict(given),
    )
