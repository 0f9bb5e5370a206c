"""The server's one browser: launched on the first call that needs it, closed at shutdown.

Launching Chromium is the expensive part of a run, and an agent calls programs one after
another, so the server keeps one host (``northstar.composition.open_host``) for its whole
life; every run still gets a fresh browser context per iteration from it. Nothing is
launched until a call needs a page: listing, describing and reading status never do.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from northstar.browser import BrowserHost
from northstar.browser.settings import BrowserSettings
from northstar.composition import open_host

__all__ = ["SharedBrowser"]


class SharedBrowser:
    """Opens the host once, on demand; ``aclose`` (at server shutdown) closes it."""

    def __init__(self, settings: BrowserSettings) -> None:
        self.settings = settings
        self._stack = AsyncExitStack()
        self._host: BrowserHost | None = None
        self._lock = asyncio.Lock()  # two first calls at once must not launch two browsers

    @property
    def started(self) -> bool:
        return self._host is not None

    async def host(self) -> BrowserHost:
        async with self._lock:
            if self._host is None:
                self._host = await self._stack.enter_async_context(open_host(self.settings))
            return self._host

    async def aclose(self) -> None:
        async with self._lock:
            self._host = None
            await self._stack.aclose()
