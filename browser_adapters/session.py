"""One iteration's browser context on Playwright: a page per tab role.

Steps address roles, never "the active tab": each role's page is kept here by name, a
popup is bound to its role when the opening step runs, and a page that closes is
forgotten so that the next step on it is ``TAB_CLOSED``. Top-level navigation outside a
role's origins is aborted by a route and reported as ``ORIGIN_BLOCKED``. Every method that
waits on the browser runs through the browser's ``BrowserWatch`` (``@watched``): a browser
that goes away ends it with ``BROWSER_CLOSED`` instead of leaving it waiting.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Literal
from urllib.parse import urljoin, urlsplit

from playwright.async_api import BrowserContext, Frame, Locator, Page, Request, Route
from playwright.async_api import Error as PlaywrightError

from browser_adapters.browser_watch import BrowserWatch, watch_of, watched
from browser_adapters.checks import run_check
from browser_adapters.error_mapping import converted_errors
from browser_adapters.har_replay import UnrecordedRequests, named_misses
from browser_adapters.locators import (
    build_locator,
    diagnose_failed_action,
    exactly_one,
    resolve_one,
)
from northstar.browser import ReadSource
from northstar.errors import (
    ActionFailed,
    NavigationFailed,
    NorthstarError,
    OriginBlocked,
    TabClosed,
    TargetAmbiguous,
)
from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, Step, Target
from northstar.redaction import redact
from northstar.results import Evidence

if TYPE_CHECKING:
    from northstar.monitor.observation import Observation

__all__ = ["PlaywrightSession", "foreign_origin_pattern"]


def foreign_origin_pattern(origins: Iterable[str]) -> re.Pattern[str]:
    """Matches http(s) URLs outside ``origins``; routed so only those requests pay a hop.

    The origins carry their scheme, so the look-ahead is anchored at the start of the URL.
    """
    allowed = "|".join(re.escape(o) for o in sorted(set(origins)))
    return re.compile(rf"^(?!(?:{allowed})(?:[/?#]|$))https?://" if allowed else r"^https?://")


def _frame_of(request: Request) -> Frame | None:
    """The request's frame, or ``None`` when it has none yet (a popup's first navigation)."""
    try:
        return request.frame
    except PlaywrightError:  # Playwright raises rather than return None here
        return None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class PlaywrightSession:
    """Implements ``northstar.browser.BrowserSession`` over one ``BrowserContext``."""

    def __init__(
        self,
        context: BrowserContext,
        plan: Plan,
        *,
        unrecorded: UnrecordedRequests | None = None,
    ) -> None:
        self._context = context
        self.watch: BrowserWatch = watch_of(context.browser)
        self.unrecorded = unrecorded  # set when replaying a recording: what it lacked
        self._plan = plan
        self._secrets = plan.secrets
        self._pages: dict[str, Page] = {}
        self._closed: set[str] = set()
        self._blocked: dict[str, str] = {}
        # A popup is not bound to its role until it exists; until then any role's origin.
        self._every_origin = frozenset(o for tab in plan.tabs.values() for o in tab.origins)

    async def start(self) -> None:
        """Install the origin guard for every role's origins."""
        if self._every_origin:
            await self._context.route(foreign_origin_pattern(self._every_origin), self._guard)

    async def _guard(self, route: Route, request: Request) -> None:
        frame = _frame_of(request)
        role = self._role_of(frame)
        allowed = self._plan.tabs[role].origins if role else self._every_origin
        # A popup's first navigation is issued before its frame exists: top-level too.
        top_level = request.is_navigation_request() and (
            frame is None or frame.parent_frame is None
        )
        if top_level and _origin(request.url) not in allowed:
            self._blocked[role or "(popup)"] = request.url
            await route.abort("blockedbyclient")
            return
        await route.fallback()

    def _role_of(self, frame: Frame | None) -> str | None:
        page = frame.page if frame is not None else None
        return next((role for role, p in self._pages.items() if p is page), None)

    @watched
    async def begin(self, plan: Plan) -> None:
        for page in list(self._pages.values()):
            async with converted_errors("close a tab before the next iteration", tab=""):
                await page.close()
        self._pages.clear()
        self._closed.clear()
        self._blocked.clear()
        self._plan = plan
        self._secrets = plan.secrets

    def has_tab(self, role: str) -> bool:
        return role in self._pages

    @watched
    async def open_tab(self, tab: BoundTab, *, timeout_ms: int) -> Evidence:
        assert tab.start is not None
        page = await self._context.new_page()
        self._bind(tab.role, page)  # before loading, so the origin guard knows the page's role
        try:
            await self._navigate(tab.role, page, tab.start, timeout_ms)
        except NorthstarError:
            await self._discard(tab.role, page)
            raise
        shown = redact(tab.start, self._secrets)
        return Evidence("tab_opened", tab.role, f"open {shown}", True, self._shown_url(page))

    def _bind(self, role: str, page: Page) -> None:
        self._pages[role] = page
        self._closed.discard(role)
        page.on("close", lambda _page: self._on_close(role, _page))

    async def _discard(self, role: str, page: Page) -> None:
        """Forget a role whose destination did not load: it is not open, so a retry reopens it."""
        self._pages.pop(role, None)
        with suppress(PlaywrightError):  # already gone with its context: nothing to close
            await page.close()

    def _on_close(self, role: str, page: Page) -> None:
        if self._pages.get(role) is page:
            del self._pages[role]
            self._closed.add(role)

    def page(self, role: str) -> Page:
        """The role's page, or ``TAB_CLOSED`` if it was closed or never opened."""
        if role in self._pages:
            return self._pages[role]
        why = "was closed" if role in self._closed else "is not open"
        raise TabClosed(f"the tab for role {role!r} {why}", tab=role)

    async def _navigate(self, role: str, page: Page, url: str, timeout_ms: int) -> None:
        self._check_origin(role, url)
        async with (
            named_misses(self.unrecorded, tab=role, secrets=self._secrets),
            converted_errors(f"goto {url}", tab=role, secrets=self._secrets, navigation=True),
        ):
            response = await page.goto(url, timeout=timeout_ms)
        if response is not None and response.status >= 400:
            raise NavigationFailed(
                f"goto {redact(url, self._secrets)}: the server answered {response.status}",
                tab=role,
                status=response.status,
            )

    def _check_origin(self, role: str, url: str) -> None:
        if (
            urlsplit(url).scheme in ("http", "https")
            and _origin(url) not in self._plan.tabs[role].origins
        ):
            raise OriginBlocked(
                f"{redact(url, self._secrets)} is outside the origins of tab {role!r}", tab=role
            )

    @watched
    async def perform(
        self, step: BoundStep, *, before_dispatch: Callable[[], None] = lambda: None
    ) -> tuple[Evidence, ...]:
        page = self.page(step.tab)
        self._blocked.pop(step.tab, None)
        if step.opens_tab is None:
            await self._act(page, step, before_dispatch)
            self._raise_if_blocked(step.tab)
            return ()
        async with converted_errors(f"{step.id} opening tab {step.opens_tab!r}", tab=step.tab):
            async with page.expect_popup(timeout=step.timeout_ms) as popup_info:
                await self._act(page, step, before_dispatch)
            popup = await popup_info.value
        self._bind(step.opens_tab, popup)
        async with converted_errors("popup load", tab=step.opens_tab, navigation=True):
            await popup.wait_for_load_state("domcontentloaded", timeout=step.timeout_ms)
        self._raise_if_blocked("(popup)", role=step.opens_tab)
        found = self._shown_url(popup)
        return (Evidence("tab_opened", step.opens_tab, f"popup of {step.id}", True, found),)

    def _shown_url(self, page: Page) -> str:
        """A page's URL for evidence: a secret in a query string stays out of the record."""
        return redact(page.url, self._secrets)

    def _raise_if_blocked(self, key: str, *, role: str | None = None) -> None:
        url = self._blocked.pop(key, None) or self._blocked.pop(role or key, None)
        if url is not None:
            raise OriginBlocked(
                f"navigation to {redact(url, self._secrets)} was blocked: not an allowed origin",
                tab=role or key,
            )
        if self.unrecorded is not None:
            self.unrecorded.raise_new(tab=role or key, secrets=self._secrets)

    async def _act(self, page: Page, step: BoundStep, before_dispatch: Callable[[], None]) -> None:
        """Resolve the target, then call ``before_dispatch`` right before acting on it."""
        body = step.step
        if body.goto is not None:
            before_dispatch()
            await self._navigate(step.tab, page, urljoin(page.url, body.goto), step.timeout_ms)
            return
        if body.press is not None and body.press.target is None:
            before_dispatch()
            async with converted_errors(f"press {body.press.key}", tab=step.tab):
                await page.keyboard.press(body.press.key)
            return
        target, action = _target_action(body)
        state: Literal["attached", "visible"] = "attached" if body.upload else "visible"
        what = f"{step.kind} {target.describe()}"
        if step.is_submit:  # resolve first, so the in-flight record precedes only the action
            async with converted_errors(what, tab=step.tab, secrets=self._secrets):
                locator = await resolve_one(
                    page, target, timeout_ms=step.timeout_ms, state=state, secrets=self._secrets
                )
        else:  # nothing to record: one auto-waiting, strict Playwright action does it all
            locator = build_locator(page, target)
        before_dispatch()
        try:
            async with converted_errors(what, tab=step.tab, secrets=self._secrets):
                await action(locator, step.timeout_ms)
        except (ActionFailed, TargetAmbiguous) as failure:
            if step.is_submit:
                raise
            raise await self._diagnosed(locator, target, failure, step, state) from failure
        except TabClosed:
            # The action closed its own tab (a "Close" button): that is its effect, and the
            # next step on the role is TAB_CLOSED. Playwright may report it either way.
            if not page.is_closed():
                raise

    async def _diagnosed(
        self,
        locator: Locator,
        target: Target,
        failure: NorthstarError,
        step: BoundStep,
        state: Literal["attached", "visible"],
    ) -> NorthstarError:
        async with converted_errors(f"{step.kind} {target.describe()}", tab=step.tab):
            return await diagnose_failed_action(
                locator,
                target,
                failure,
                timeout_ms=step.timeout_ms,
                state=state,
                secrets=self._secrets,
            )

    @watched
    async def check(self, check: Check, *, tab: str, timeout_ms: int) -> Evidence:
        page = self.page(tab)
        what = redact(check.describe(), self._secrets)
        async with converted_errors(what, tab=tab, secrets=self._secrets):
            evidence = await run_check(page, check, tab=tab, timeout_ms=timeout_ms, shown=what)
        self._raise_if_blocked(tab)
        return evidence

    @watched
    async def read(
        self,
        source: ReadSource,
        *,
        tab: str,
        target: Target | None,
        attribute: str | None,
        timeout_ms: int,
    ) -> str:
        """Read a value; a secret in it is redacted, as outputs are journaled and shown."""
        page = self.page(tab)
        if source == "url":
            return self._shown_url(page)
        async with converted_errors(f"read {source}", tab=tab, secrets=self._secrets):
            if source == "title":
                return redact(await page.title(), self._secrets)
            assert target is not None
            # One strict, auto-waiting read: exactly one element, attached.
            locator = build_locator(page, target)
            async with exactly_one(
                locator, target, timeout_ms=timeout_ms, state="attached", secrets=self._secrets
            ):
                value = await _read_locator(locator, source, attribute, timeout_ms)
            return redact(value, self._secrets)

    @watched
    async def observe(self, tab: str) -> Observation:
        # Loaded on first use: the stored path takes no observations.
        from browser_adapters.observation_capture import capture_observation

        return await capture_observation(self.page(tab), role=tab, secret_values=self._secrets)

    @watched
    async def screenshot(self, tab: str) -> bytes | None:
        page = self._pages.get(tab)
        if page is None:
            return None
        async with converted_errors("screenshot", tab=tab):
            return await page.screenshot(timeout=5000)

    @property
    def context(self) -> BrowserContext:
        """The iteration's context (for tracing and other debugging aids)."""
        return self._context

    def pages(self) -> Mapping[str, Page]:
        """The open pages by role (for observation capture and debugging aids)."""
        return dict(self._pages)


async def _read_locator(
    locator: Locator, source: ReadSource, attribute: str | None, timeout_ms: int
) -> str:
    if source == "text":
        return (await locator.inner_text(timeout=timeout_ms)).strip()
    if source == "value":
        return await locator.input_value(timeout=timeout_ms)
    value = await locator.get_attribute(attribute or "", timeout=timeout_ms)
    if value is None:
        raise ActionFailed(f"the element has no attribute {attribute!r}")
    return value


LocatorAction = Callable[[Locator, int], Awaitable[None]]


def _target_action(body: Step) -> tuple[Target, LocatorAction]:
    """The target of an action step and a coroutine that performs it on a locator."""
    if body.click is not None:
        click = body.click
        return click.target, lambda loc, t: loc.click(
            button=click.button, click_count=click.count, timeout=t
        )
    if body.fill is not None:
        value = body.fill.value
        return body.fill.target, lambda loc, t: loc.fill(value, timeout=t)
    if body.select is not None:
        return body.select.target, _select(body)
    if body.check is not None:
        return body.check.target, lambda loc, t: loc.check(timeout=t)
    if body.uncheck is not None:
        return body.uncheck.target, lambda loc, t: loc.uncheck(timeout=t)
    if body.hover is not None:
        return body.hover.target, lambda loc, t: loc.hover(timeout=t)
    if body.upload is not None:
        files = list(body.upload.files)
        return body.upload.target, lambda loc, t: loc.set_input_files(files, timeout=t)
    if body.press is not None and body.press.target is not None:
        key = body.press.key
        return body.press.target, lambda loc, t: loc.press(key, timeout=t)
    raise ActionFailed(f"step kind {body.kind!r} is not an action")


def _select(body: Step) -> LocatorAction:
    assert body.select is not None
    select = body.select

    async def choose(loc: Locator, timeout: int) -> None:
        if select.label is not None:
            await loc.select_option(label=select.label, timeout=timeout)
        else:
            await loc.select_option(select.values or select.value, timeout=timeout)

    return choose
