"""One ``BrowserContext`` per lane, reset between iterations to what a new one would hold.

A new context per iteration costs a new renderer process and, in it, Playwright's injected
script rebuilt in every page; reusing the context saves both. The reset is what makes the
reuse as strong as a new context for everything that carries identity:

- every page but one is closed, and that one (the next iteration's first tab) is sent to
  ``about:blank``, so no document of the last iteration is left running;
- ``clear_cookies`` (every cookie, HttpOnly ones too) and ``clear_permissions``;
- for every origin a document of the context committed (every frame of every page: tab
  roles, popups and cross-origin subframes, whose partitioned storage goes too) and every
  tab role's origin, CDP ``Storage.clearDataForOrigin(storageTypes="all")``: localStorage,
  sessionStorage (which ``about:blank`` alone would keep for the same tab), IndexedDB,
  Cache Storage, service workers, file systems, websql;
- ``Network.clearBrowserCache``: the context's in-memory HTTP cache, so a page of the last
  iteration is fetched again rather than served from it.

What a reused context keeps: the kept page's back/forward history (no step goes back),
open sockets and the HTTP authentication cache of the browser's network context.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from playwright.async_api import Browser, BrowserContext, CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError

if TYPE_CHECKING:
    from playwright._impl._api_structures import SetCookieParam

__all__ = ["ReusableContext", "origins_to_clear", "state_cookies"]


def origins_to_clear(committed: Iterable[str], declared: Iterable[str]) -> list[str]:
    """The http(s) origins whose storage a reset clears: committed documents' and the roles'.

    ``about:blank``, ``data:`` and the like hold no storage of their own (they use their
    creator's origin, which is in the list through the creator's own document).
    """
    origins = set()
    for url in (*committed, *declared):
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc:
            origins.add(f"{parts.scheme}://{parts.netloc}".lower())
    return sorted(origins)


def state_cookies(path: str) -> list[SetCookieParam] | None:
    """A storage state's cookies when cookies are all it holds, else ``None``.

    Such a state can seed a reused context: after the reset, adding its cookies gives
    what a new context made from it would hold. Local storage or IndexedDB cannot be put
    back as cheaply, so a state with any needs a new context per iteration.
    """
    with open(path, encoding="utf-8") as file:
        state = json.load(file)
    if any(
        origin.get("localStorage") or origin.get("indexedDB") for origin in state.get("origins", [])
    ):
        return None
    return list(state.get("cookies", []))


@dataclass
class _CommittedOrigins:
    """The URL of every document committed in any frame of the context since the last reset."""

    urls: set[str] = field(default_factory=set)

    def follow(self, context: BrowserContext) -> None:
        context.on("page", self._follow_page)

    def _follow_page(self, page: Page) -> None:
        page.on("framenavigated", self._committed)

    def _committed(self, frame: Frame) -> None:
        self.urls.add(frame.url)

    def take(self) -> set[str]:
        urls, self.urls = self.urls, set()
        return urls


@dataclass
class ReusableContext:
    """A lane's context and its kept page, with the reset that runs between iterations."""

    context: BrowserContext
    kept: Page
    committed: _CommittedOrigins
    declared: set[str] = field(default_factory=set)  # the tab roles' origins since the reset
    cdp: CDPSession | None = None  # the kept page's session, made at the first reset

    @classmethod
    async def open(cls, browser: Browser, options: dict[str, Any]) -> ReusableContext:
        context = await browser.new_context(**options)
        committed = _CommittedOrigins()
        committed.follow(context)  # before any page exists: every frame is followed
        return cls(context, await context.new_page(), committed)

    def take_kept(self) -> Page | None:
        """The kept page for the iteration's first tab (once), if it is still open."""
        kept = self.kept
        return None if kept.is_closed() else kept

    async def reset(self) -> None:
        """Close the iteration's other pages, then clear everything listed in the docstring."""
        if self.kept.is_closed():
            self.kept, self.cdp = await self.context.new_page(), None
        for page in self.context.pages:
            if page is not self.kept:
                with suppress(PlaywrightError):  # closed meanwhile: nothing to close
                    await page.close()
        # Committed is enough: by then the last document is gone; about:blank has no load.
        await self.kept.goto("about:blank", wait_until="commit")
        origins = origins_to_clear(self.committed.take(), self.declared)
        self.declared.clear()
        # One session for the kept page's life: a new one per reset costs two round trips.
        if self.cdp is None:
            self.cdp = await self.context.new_cdp_session(self.kept)
        # Nothing of the last iteration runs any more, so the clears are independent of one
        # another: sent together, the reset waits for the slowest instead of their sum.
        clears = [
            self.context.clear_cookies(),
            self.context.clear_permissions(),
            *(self._clear_origin(self.cdp, origin) for origin in origins),
            self.cdp.send("Network.clearBrowserCache"),
        ]
        await _all_of(clears)

    @staticmethod
    async def _clear_origin(cdp: CDPSession, origin: str) -> None:
        await cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})


async def _all_of(calls: Sequence[Awaitable[object]]) -> None:
    """Await every call; the first failure is raised once all have ended (none is left
    running into the next iteration)."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    failure = next((r for r in results if isinstance(r, BaseException)), None)
    if failure is not None:
        raise failure
