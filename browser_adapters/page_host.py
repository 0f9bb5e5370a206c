"""A host over a page someone else opened: a Playwright test's own ``page``.

``PlaywrightHost`` launches a browser and gives each iteration a fresh context. Here the
browser, the context and the page belong to the caller (pytest-playwright's fixtures
open and close them), and a recipe runs inside them: the recipe's first tab role is the
given page (its start URL is loaded in it), other roles and declared popups open in the
page's context, and every role's origins are enforced by an origin gate opened on the
page's browser for the duration of the host and closed after it. Nothing the caller
owns is closed here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType

from playwright.async_api import Page

from browser_adapters.host import PlaywrightHost
from browser_adapters.origin_gate import OriginGate
from browser_adapters.session import PlaywrightSession
from northstar.browser.settings import BrowserSettings
from northstar.errors import UsageInvalid
from northstar.plan.model import Plan

__all__ = ["PageHost", "first_role"]


class PageHost:
    """Implements ``northstar.browser.BrowserHost`` on a given page; use as ``async with``."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self._gate: OriginGate | None = None

    async def __aenter__(self) -> PageHost:
        browser = self.page.context.browser
        if browser is None:
            raise UsageInvalid(
                "the page's context has no browser (a persistent context)",
                fix="Give a page of a context made by browser.new_context(), like "
                "pytest-playwright's page fixture.",
            )
        self._gate = await OriginGate.open(browser)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._gate is not None:
            await self._gate.close()
            self._gate = None

    @asynccontextmanager
    async def session(
        self, plan: Plan, *, storage_state: str | None = None
    ) -> AsyncIterator[PlaywrightSession]:
        """The page's context, with the recipe's first tab role bound to the page.

        The context is the caller's: a ``storage_state`` cannot be put into it afterwards,
        so none may be given.
        """
        if storage_state is not None:
            raise UsageInvalid(
                "a recipe run on a given page starts from that page's context, not a saved state",
                fix="Sign the page's context in before handing it over, or run with a host.",
            )
        if self._gate is None:
            raise RuntimeError("PageHost is used outside `async with`")
        given = {first_role(plan): self.page}
        session = PlaywrightSession(self.page.context, plan, gate=self._gate, given=given)
        try:
            yield session
        finally:
            session.release()  # the caller's context goes on: its new pages are its own

    def read_only(self, storage_state: str | None) -> PlaywrightHost:
        """Probes run in new read-only contexts of the page's browser, never in its context."""
        browser = self.page.context.browser
        if self._gate is None or browser is None:
            raise RuntimeError("PageHost is used outside `async with`")
        settings = BrowserSettings(storage_state=storage_state, read_only=True)
        return PlaywrightHost.borrowing(browser, self._gate, settings)


def first_role(plan: Plan) -> str:
    """The role the given page plays: the recipe's first tab that the runner opens itself."""
    for role, tab in plan.tabs.items():
        if tab.start is not None:
            return role
    raise UsageInvalid(
        "the recipe has no tab with a start URL for the given page to load",
        fix="Give the recipe's first tab a `start:` URL.",
    )
