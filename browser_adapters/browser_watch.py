"""A browser that goes away ends every adapter call waiting on it, as ``BROWSER_CLOSED``.

When Chromium is killed (SIGKILL, the OOM killer, a crash), Playwright's driver notices
and emits ``disconnected`` on the ``Browser``; but a call already sent may never be
answered: ``new_page()`` was seen waiting for ever after a kill right after an iteration
verified (3 tries of 4), and other moments raised ``TargetClosedError`` from calls with
no conversion (``new_context()``), a traceback. So each adapter call that waits on the
browser (the session's step methods, the host's context calls, a trace's start and stop)
runs through ``BrowserWatch.call``: in a task of its own (see ``own_task``), raced
against the disconnection, and bounded in time when Playwright gives the call no
timeout of its own. A disconnection turns whatever the call was doing into
``BrowserClosed``; the runner then fails the iteration (``unknown`` if a submission was
dispatched) and the run stops.
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import suppress
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError

from northstar.errors import ActionFailed, BrowserClosed, NorthstarError

__all__ = ["CALL_BOUND_S", "BrowserWatch", "watch_of", "watched"]

P = ParamSpec("P")
R = TypeVar("R")

# The bound on one adapter call when nothing tighter is known: far above any step's
# timeout (Playwright's own timeouts fire first), yet a browser that stops answering
# cannot hold a run for ever.
CALL_BOUND_S = 120.0

_watches: weakref.WeakKeyDictionary[Browser, BrowserWatch] = weakref.WeakKeyDictionary()


class BrowserWatch:
    """Knows whether its browser is still connected, and races calls against it."""

    def __init__(self, browser: Browser | None) -> None:
        self._gone = False
        self._gone_signal: asyncio.Future[None] | None = None  # made on the loop's first call
        if browser is None:  # a persistent context: no Browser object to watch
            return
        browser.on("disconnected", lambda _browser: self._mark_gone())
        self._gone = not browser.is_connected()

    @property
    def gone(self) -> bool:
        return self._gone

    def _mark_gone(self) -> None:
        self._gone = True
        if self._gone_signal is not None and not self._gone_signal.done():
            self._gone_signal.set_result(None)

    def _signal(self) -> asyncio.Future[None]:
        """One future for every call to wait on (no task per call: calls are many)."""
        if self._gone_signal is None:
            self._gone_signal = asyncio.get_running_loop().create_future()
            if self._gone:
                self._gone_signal.set_result(None)
        return self._gone_signal

    def closed_error(self, what: str) -> BrowserClosed:
        return BrowserClosed(f"{what}: the browser closed (killed or crashed) during the call")

    async def call(self, work: Awaitable[R], *, what: str, timeout_s: float = CALL_BOUND_S) -> R:
        """``work``'s result, unless the browser goes away or ``timeout_s`` passes first."""
        task = asyncio.ensure_future(work)
        try:
            done, _ = await asyncio.wait(
                (task, self._signal()), timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            if not task.done():
                task.cancel()  # also when this call itself is cancelled
        if task in done:
            return self._result(task, what)
        with suppress(asyncio.CancelledError, NorthstarError, PlaywrightError):
            await task  # let the abandoned call unwind
        if self.gone:
            raise self.closed_error(what)
        raise ActionFailed(f"{what}: the browser did not answer within {timeout_s:.0f} s")

    def _result(self, task: asyncio.Future[R], what: str) -> R:
        """The call's result; its error becomes ``BrowserClosed`` if the browser is gone."""
        try:
            return task.result()
        except (NorthstarError, PlaywrightError) as exc:
            if self.gone and not isinstance(exc, BrowserClosed):
                raise self.closed_error(what) from exc
            raise


def watch_of(browser: Browser | None) -> BrowserWatch:
    """The one watch of ``browser`` (one ``disconnected`` listener however many callers)."""
    if browser is None:
        return BrowserWatch(None)
    if browser not in _watches:
        _watches[browser] = BrowserWatch(browser)
    return _watches[browser]


class Watched(Protocol):
    @property
    def watch(self) -> BrowserWatch: ...


W = TypeVar("W", bound=Watched)


def watched(
    method: Callable[Concatenate[W, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[W, P], Coroutine[Any, Any, R]]:
    """``method`` run through its object's ``watch`` (see the module docstring)."""

    @functools.wraps(method)
    async def run(self: W, /, *args: P.args, **kwargs: P.kwargs) -> R:
        what = method.__name__.lstrip("_")
        return await self.watch.call(method(self, *args, **kwargs), what=what)

    return run
