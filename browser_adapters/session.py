"""One iteration's browser context on Playwright: a page per tab role.

Steps address roles, never "the active tab": each role's page is kept here by name, a
popup is bound to its role when the opening step runs, and a page that closes is
forgotten so that the next step on it is ``TAB_CLOSED``. Top-level navigation outside a
role's origins is aborted by a route and reported as ``ORIGIN_BLOCKED``.

An agent acts on the element references of an observation (``perform_on_reference``):
Playwright resolves ``aria-ref=`` against the page's latest AI-mode snapshot, so the
session remembers which observation that is per role and refuses any other, and refuses
a reference whose element left the page, before anything is dispatched.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Literal
from urllib.parse import urljoin, urlsplit

from playwright.async_api import BrowserContext, Frame, Locator, Page, Request, Route
from playwright.async_api import Error as PlaywrightError

from browser_adapters.acted_on import ActedOn, describe_acted_on, select_choices
from browser_adapters.checks import run_check
from browser_adapters.error_mapping import converted_errors
from browser_adapters.har_replay import UnrecordedRequests, named_misses
from browser_adapters.locators import (
    build_locator,
    diagnose_failed_action,
    exactly_one,
    resolve_one,
)
from browser_adapters.own_task import in_own_task
from northstar.browser import Reading, ReadSource
from northstar.errors import (
    ActionFailed,
    NavigationFailed,
    NorthstarError,
    OptionMissing,
    OriginBlocked,
    StaleReference,
    TabClosed,
    TargetAmbiguous,
)
from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, Step, Target
from northstar.redaction import redact
from northstar.results import Evidence

if TYPE_CHECKING:
    from northstar.monitor.observation import ElementRef, Observation

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
        self.unrecorded = unrecorded  # set when replaying a recording: what it lacked
        self._plan = plan
        self._secrets = plan.secrets
        self._pages: dict[str, Page] = {}
        self._closed: set[str] = set()
        self._blocked: dict[str, str] = {}
        self._snapshots: dict[str, str] = {}  # role -> snapshot id of its latest observation
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

    @in_own_task
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
        self._snapshots.pop(role, None)
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

    @in_own_task
    async def perform(
        self, step: BoundStep, *, before_dispatch: Callable[[], None] = lambda: None
    ) -> tuple[Evidence, ...]:
        page = self.page(step.tab)
        self._blocked.pop(step.tab, None)
        if step.opens_tab is None:
            acted_on = await self._act(page, step, before_dispatch)
            self._raise_if_blocked(step.tab)
            return acted_on
        async with converted_errors(f"{step.id} opening tab {step.opens_tab!r}", tab=step.tab):
            async with page.expect_popup(timeout=step.timeout_ms) as popup_info:
                acted_on = await self._act(page, step, before_dispatch)
            popup = await popup_info.value
        self._bind(step.opens_tab, popup)
        async with converted_errors("popup load", tab=step.opens_tab, navigation=True):
            await popup.wait_for_load_state("domcontentloaded", timeout=step.timeout_ms)
        self._raise_if_blocked("(popup)", role=step.opens_tab)
        found = self._shown_url(popup)
        opened = Evidence("tab_opened", step.opens_tab, f"popup of {step.id}", True, found)
        return (*acted_on, opened)

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

    @in_own_task
    async def perform_on_reference(
        self,
        step: BoundStep,
        reference: ElementRef,
        *,
        before_dispatch: Callable[[], None] = lambda: None,
    ) -> tuple[Evidence, ...]:
        page = self.page(step.tab)
        locator = await self._referenced(page, step, reference)
        self._blocked.pop(step.tab, None)
        acted_on = await self._act(page, step, before_dispatch, referenced=locator)
        self._raise_if_blocked(step.tab)
        return acted_on

    async def _referenced(self, page: Page, step: BoundStep, reference: ElementRef) -> Locator:
        """The reference's element, or ``StaleReference`` naming what it was (nothing sent)."""
        target, _ = _target_action(step.step)
        what = f"reference {reference.ref} ({redact(target.describe(), self._secrets)})"
        if self._snapshots.get(step.tab) != reference.snapshot_id:
            raise StaleReference(
                f"{what} is not from the latest observation of tab {step.tab!r}", tab=step.tab
            )
        locator = page.locator(f"aria-ref={reference.ref}")
        async with converted_errors(f"find {what}", tab=step.tab, secrets=self._secrets):
            found = await locator.count()
        if found != 1:  # a new document, or the element was removed since the observation
            raise StaleReference(f"{what} is no longer on the page", tab=step.tab)
        return locator

    async def _act(
        self,
        page: Page,
        step: BoundStep,
        before_dispatch: Callable[[], None],
        *,
        referenced: Locator | None = None,
    ) -> tuple[Evidence, ...]:
        """Act, and return what the target resolved to (an ``acted_on`` evidence).

        ``referenced`` is the element of an agent's reference, already found: it is used
        instead of the step's target, which then only describes it.
        """
        body = step.step
        if body.goto is not None:
            before_dispatch()
            await self._navigate(step.tab, page, urljoin(page.url, body.goto), step.timeout_ms)
            return ()
        if body.press is not None and body.press.target is None:
            before_dispatch()
            async with converted_errors(f"press {body.press.key}", tab=step.tab):
                await page.keyboard.press(body.press.key)
            return ()
        acted_on = await self._act_on_target(page, step, before_dispatch, referenced)
        what = redact(self._what(step), self._secrets)
        return (Evidence("acted_on", step.tab, what, True, acted_on.summary()),)

    async def _act_on_target(
        self,
        page: Page,
        step: BoundStep,
        before_dispatch: Callable[[], None],
        referenced: Locator | None,
    ) -> ActedOn:
        """Resolve the target and read what it is, then call ``before_dispatch`` right
        before acting on it. The step's timeout bounds the whole of it."""
        target, action = _target_action(step.step)
        state: Literal["attached", "visible"] = "attached" if step.step.upload else "visible"
        left = _time_left(step.timeout_ms)
        locator = referenced or build_locator(page, target)
        if step.is_submit and referenced is None:  # resolve first: in flight precedes the act
            async with converted_errors(self._what(step), tab=step.tab, secrets=self._secrets):
                locator = await resolve_one(
                    page, target, timeout_ms=step.timeout_ms, state=state, secrets=self._secrets
                )
        # Not a submission: the read below waits for the target (strictly) and a failure of
        # the read or the action is diagnosed: missing, ambiguous, or not actionable.
        try:
            acted_on = await self._described(locator, step, left())
            before_dispatch()
            await self._dispatch(page, step, action, locator, left())
        except OptionMissing:
            raise
        except (ActionFailed, TargetAmbiguous) as failure:
            if step.is_submit or referenced is not None:
                raise
            raise await self._diagnosed(locator, target, failure, step, state) from failure
        return acted_on

    async def _dispatch(
        self, page: Page, step: BoundStep, action: LocatorAction, locator: Locator, left: float
    ) -> None:
        try:
            async with converted_errors(self._what(step), tab=step.tab, secrets=self._secrets):
                await action(locator, left)
        except TabClosed:
            # The action closed its own tab (a "Close" button): that is its effect, and the
            # next step on the role is TAB_CLOSED. Playwright may report it either way.
            if not page.is_closed():
                raise

    def _what(self, step: BoundStep) -> str:
        return f"{step.kind} {_action_target(step).describe()}"

    async def _described(self, locator: Locator, step: BoundStep, timeout_ms: float) -> ActedOn:
        """The element ``locator`` resolves to; a select's missing choice fails here, at once."""
        async with converted_errors(self._what(step), tab=step.tab, secrets=self._secrets):
            acted_on = await describe_acted_on(
                locator,
                timeout_ms=timeout_ms,
                submit=step.is_submit,
                choices=select_choices(step.step.select),
                secrets=self._secrets,
            )
        missing = acted_on.option_missing(redact(self._what(step), self._secrets))
        if missing is not None:
            raise missing.with_context(tab=step.tab)
        return acted_on

    async def _diagnosed(
        self,
        locator: Locator,
        target: Target,
        failure: NorthstarError,
        step: BoundStep,
        state: Literal["attached", "visible"],
    ) -> NorthstarError:
        async with converted_errors(f"{step.kind} {target.describe()}", tab=step.tab):
            diagnosed = await diagnose_failed_action(
                locator,
                target,
                failure,
                timeout_ms=step.timeout_ms,
                state=state,
                secrets=self._secrets,
            )
            if diagnosed is failure and step.step.select is not None:
                return await self._select_diagnosed(locator, step) or failure
        return diagnosed

    async def _select_diagnosed(self, locator: Locator, step: BoundStep) -> NorthstarError | None:
        """After Playwright waited in vain: a choice that no option has, named."""
        acted_on = await describe_acted_on(
            locator,
            timeout_ms=1000,
            submit=False,
            choices=select_choices(step.step.select),
            secrets=self._secrets,
        )
        what = redact(self._what(step), self._secrets)
        missing = acted_on.option_missing(what, waited=True)
        return None if missing is None else missing.with_context(tab=step.tab)

    @in_own_task
    async def check(self, check: Check, *, tab: str, timeout_ms: int) -> Evidence:
        page = self.page(tab)
        what = redact(check.describe(), self._secrets)
        async with converted_errors(what, tab=tab, secrets=self._secrets):
            evidence = await run_check(page, check, tab=tab, timeout_ms=timeout_ms, shown=what)
        self._raise_if_blocked(tab)
        return evidence

    @in_own_task
    async def read(self, reading: Reading, *, timeout_ms: int) -> str:
        """Read a value; a secret in it is redacted, as outputs are journaled and shown."""
        source, tab, target = reading.source, reading.tab, reading.target
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
                value = await _read_locator(locator, source, reading.attribute, timeout_ms)
            return redact(value, self._secrets)

    async def observe(self, tab: str) -> Observation:
        # Loaded on first use: the stored path takes no observations.
        from browser_adapters.observation_capture import capture_observation

        self._snapshots.pop(tab, None)  # from here on the page's snapshot is the new one
        observation = await capture_observation(
            self.page(tab), role=tab, secret_values=self._secrets
        )
        self._snapshots[tab] = observation.snapshot_id
        return observation

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


LocatorAction = Callable[[Locator, float], Awaitable[None]]


def _time_left(timeout_ms: int) -> Callable[[], float]:
    """Milliseconds left of a step's timeout, so its several Playwright calls share it."""
    end = time.monotonic() + timeout_ms / 1000
    return lambda: max(1.0, (end - time.monotonic()) * 1000)


def _action_target(step: BoundStep) -> Target:
    target = step.step.action_target
    assert target is not None, "only steps that act on a target get here"
    return target


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

    async def choose(loc: Locator, timeout: float) -> None:
        if select.label is not None:
            await loc.select_option(label=select.label, timeout=timeout)
        else:
            await loc.select_option(select.values or select.value, timeout=timeout)

    return choose
