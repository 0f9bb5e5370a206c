"""One iteration's browser context on Playwright: a page per tab role.

Steps address roles, never "the active tab": each role's page is kept here by name, a
popup is bound to its role when the opening step runs, and a page that closes is
forgotten so that the next step on it is ``TAB_CLOSED``. The origin gate
(``origin_gate.py``) refuses a top-level document outside a role's origins, at every hop
of a redirect, and this session reports it as ``ORIGIN_BLOCKED`` naming both URLs. A popup
no step declared (``opens_tab``) loads nothing and is closed: ``ORIGIN_BLOCKED`` if it was
heading outside its opener's origins, a ``popup_closed`` evidence item otherwise. In an
agent's session (``Plan.adopt_popups``) such a popup becomes a tab ``popup-N`` instead,
guarded by its opener's origins from its first request, reported as ``tab_opened`` (and
``tab_closed`` when it closes) in the evidence of the action that saw it. A page
the context opens with no opener (a middle-click, ctrl/shift/meta-click) is never a
declared popup: the gate refuses its first request like an undeclared popup's, and the
session closes it the same way.

Only http(s) pages load (``northstar.fences``): a navigation to ``file:``, ``data:``,
``javascript:``, ``blob:`` or any other scheme is ``SCHEME_BLOCKED`` before it is sent,
and a page that ended up on one anyway (a script can open a ``blob:``) is read by no step:
acting, checking, reading and observing on it are ``SCHEME_BLOCKED`` too.

Every method that waits on the browser runs through the browser's ``BrowserWatch``
(``@watched``, which also runs it in a task of its own, like ``own_task``): a browser that
goes away ends it with ``BROWSER_CLOSED`` instead of leaving it waiting.

An agent acts on the element references of an observation (``perform_on_reference``):
Playwright resolves ``aria-ref=`` against the page's latest AI-mode snapshot, so the
session remembers which observation that is per role and refuses any other, and refuses
a reference whose element left the page, before anything is dispatched.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Coroutine, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urljoin

from playwright.async_api import BrowserContext, Locator, Page
from playwright.async_api import Error as PlaywrightError

from browser_adapters.acted_on import (
    ActedOn,
    describe_acted_on,
    select_choices,
)
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
from browser_adapters.origin_gate import OriginGate, PageGuard, Refusal
from browser_adapters.page_requests import PageRequests
from browser_adapters.rich_text import fill_text
from northstar.browser import Reading, ReadSource, SendTrace
from northstar.errors import (
    ActionFailed,
    NavigationFailed,
    NorthstarError,
    OptionMissing,
    OriginBlocked,
    SchemeBlocked,
    StaleReference,
    TabClosed,
    TargetAmbiguous,
)
from northstar.fences import (
    allowed_upload,
    page_refusal,
    refused_page_shown,
    shown_page_url,
    upload_refused,
)
from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, Step, Target, UploadAction
from northstar.redaction import redact
from northstar.results import Evidence

if TYPE_CHECKING:
    from northstar.monitor.observation import ElementRef, Observation

__all__ = ["PlaywrightSession"]


def _shown(url: str, secrets: Collection[str]) -> str:
    return redact(shown_page_url(url), secrets)


def _outside(refused: Refusal, role: str) -> str:
    if refused.reason == "scheme":
        return "which no tab may load (only http(s) pages)"
    return f"outside the origins of tab {role!r}"


def _blocked(refused: Refusal, message: str, role: str) -> OriginBlocked:
    kind = SchemeBlocked if refused.reason == "scheme" else OriginBlocked
    return kind(message, tab=role)


def _refused_error(refused: Refusal, role: str, secrets: Collection[str]) -> OriginBlocked:
    """Naming the URL that was refused and, after a redirect, the URL that sent it."""
    to = _shown(refused.url, secrets)
    if refused.redirected_from is None:
        message = f"navigation to {to} was blocked: {_outside(refused, role)}"
    else:
        source = _shown(refused.redirected_from, secrets)
        message = f"{source} redirected to {to}, {_outside(refused, role)}: not followed"
    return _blocked(refused, message, role)


def _undeclared_error(refused: Refusal, opener: str, secrets: Collection[str]) -> OriginBlocked:
    to = _shown(refused.url, secrets)
    if refused.redirected_from is not None:
        to += f" (redirected from {_shown(refused.redirected_from, secrets)})"
    where = "outside the tab's origins" if refused.reason != "scheme" else _outside(refused, opener)
    message = (
        f"a popup of tab {opener!r} that no step declares tried to load {to}, {where}; "
        "it was closed"
    )
    return _blocked(refused, message, opener)


@dataclass
class _AwaitedPopup:
    """The popup a step declares (``opens_tab``): the first one its tab opens during the step.

    The gate (at the popup's creation) and Playwright's ``popup`` event (once it loaded) each
    claim it once, so both agree on which popup is the role's and which are undeclared.
    """

    opener: str
    role: str
    claimed_by: set[str] = field(default_factory=set)

    def claim(self, opener: str, side: str) -> str | None:
        if opener != self.opener or side in self.claimed_by:
            return None
        self.claimed_by.add(side)
        return self.role


# Closing a popup is one round trip; a bound, not a pause: generous, as a busy machine may
# take seconds for it and a popup still closing when its step ends loses its evidence.
_POPUP_CLOSE_S = 30.0
_POPUP_LOAD_MS = 30_000  # an adopted popup's first document; a bound, not a pause


@dataclass
class _Adopting:
    """A popup the gate gave a generated role (``Plan.adopt_popups``), until its page is bound."""

    opener: str
    role: str
    bound: asyncio.Event = field(default_factory=asyncio.Event)


class PlaywrightSession:
    """Implements ``northstar.browser.BrowserSession`` over one ``BrowserContext``."""

    def __init__(
        self,
        context: BrowserContext,
        plan: Plan,
        *,
        gate: OriginGate,
        unrecorded: UnrecordedRequests | None = None,
        given: Mapping[str, Page] | None = None,
        spare: Page | None = None,
    ) -> None:
        self._context = context
        self._spare = spare  # a blank page of a reused context: the first tab opened takes it
        self._listeners: list[tuple[Page | BrowserContext, str, Callable[[Any], None]]] = []
        self._given = dict(given or {})  # role -> a page someone else opened, used on open
        self._lent = list(self._given.values())  # never closed here: their owner closes them
        self.watch: BrowserWatch = watch_of(context.browser)
        self.unrecorded = unrecorded  # set when replaying a recording: what it lacked
        self._gate = gate
        self._plan = plan
        # The plan's secrets, and every value seen in or typed into a password field since:
        # whoever typed it, no evidence, error or observation of this session shows it.
        self._passwords: set[str] = set()
        self._secrets: set[str] = set(plan.secrets)
        self._pages: dict[str, Page] = {}
        self._requests: dict[str, PageRequests] = {}  # per role, for idle checks and NOT_SENT
        self._closed: set[str] = set()
        self._blocked: dict[str, Refusal] = {}  # by role, until a step reports it
        self._snapshots: dict[str, str] = {}  # role -> snapshot id of its latest observation
        # Set while a trace records: Northstar's own reads of a page go in one folded group,
        # so the trace viewer shows the recipe's actions, not the reads around them.
        self.trace_internal_reads = False
        self._undeclared: list[tuple[str, Refusal]] = []  # (opener role, what it asked for)
        self._notices: list[Evidence] = []  # undeclared popups closed inside the origins
        self._awaited: _AwaitedPopup | None = None
        self._adopting: list[_Adopting] = []  # in creation order, as the gate saw them
        self._adopted: list[Evidence] = []  # tabs opened or closed since the last action
        self._closing: set[asyncio.Task[None]] = set()
        self._acting: str | None = None  # the role of the step running, or that ran last
        self._opening = asyncio.Lock()  # held while a tab's own new page is made and bound
        self._listen(context, "page", self._on_new_page)
        # Every request of every page of the context, for NOT_SENT: a submission may post
        # from a popup or a worker as well as from its own page.
        self._context_requests = PageRequests()
        for event, handler in self._context_requests.request_handlers():
            self._listen(context, event, handler)
        self._sent_mark: dict[str, tuple[int, int]] = {}  # role -> counts at its last submit

    def _guard(self, role: str) -> PageGuard:
        """The gate's guard for a role's page: the role's origins; a refusal is the role's."""
        return PageGuard(
            frozenset(self._plan.tabs[role].origins),
            on_refused=lambda refused: self._blocked.__setitem__(role, refused),
            on_popup=lambda: self._popup_guard(role),
            on_new_page=self._new_page_guard,
        )

    def _popup_guard(self, opener: str) -> PageGuard:
        """The guard of a popup of ``opener``: its role's if a step awaits it, else refusing."""
        role = self._awaited.claim(opener, "gate") if self._awaited is not None else None
        if role is not None:
            return self._guard(role)
        if self._plan.adopt_popups:
            return self._guard(self._adopt(opener))
        return self._undeclared_guard(opener)

    def _adopt(self, opener: str) -> str:
        """A new role for a popup of ``opener``, with the opener's origins, before it loads."""
        number = 1 + sum(1 for role in self._plan.tabs if role.startswith("popup-"))
        role = f"popup-{number}"
        origins = self._plan.tabs[opener].origins
        tabs = {**self._plan.tabs, role: BoundTab(role, None, None, origins)}
        self._plan = replace(self._plan, tabs=tabs)
        self._adopting.append(_Adopting(opener, role))
        return role

    def _undeclared_guard(self, opener: str) -> PageGuard:
        return PageGuard(
            frozenset(self._plan.tabs[opener].origins),
            on_refused=lambda refused: self._undeclared.append((opener, refused)),
            on_popup=lambda: self._undeclared_guard(opener),
            undeclared=True,
            on_new_page=self._new_page_guard,
        )

    def _new_page_guard(self) -> PageGuard:
        """A page of the context with no opener: undeclared, charged to the acting role.

        The session's own new page gets it too, until ``open_tab`` watches it.
        """
        return self._undeclared_guard(self._opener_role())

    def _opener_role(self) -> str:
        return self._acting or next(iter(self._pages), None) or next(iter(self._plan.tabs))

    def _on_popup(self, opener: str, popup: Page) -> None:
        if self._awaited is not None and self._awaited.claim(opener, "page") is not None:
            return  # the step's expect_popup takes it
        adopting = next((a for a in self._adopting if a.opener == opener), None)
        if adopting is not None:
            self._adopting.remove(adopting)
            self._bind(adopting.role, popup)
            opened = f"popup of tab {opener!r}"
            self._adopted.append(Evidence("tab_opened", adopting.role, opened, True, popup.url))
            adopting.bound.set()
            return
        self._spawn(self._close_undeclared(opener, popup))

    def _on_new_page(self, page: Page) -> None:
        """Any page of the context: one with no opener that is not a tab's is closed."""
        self._spawn(self._settle_new_page(page))

    def _spawn(self, closing: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(closing)
        self._closing.add(task)  # held until done: a task nobody references may be collected
        task.add_done_callback(self._closing.discard)

    async def _settle_new_page(self, page: Page) -> None:
        async with self._opening:  # a tab's own new page is bound by now
            if self._is_own(page):
                return
        with suppress(PlaywrightError):  # gone already: nothing to close
            if await page.opener() is not None:
                return  # a popup: ``_on_popup`` decides
            await self._close_undeclared(self._opener_role(), page)

    def _is_own(self, page: Page) -> bool:
        """A page this session made, was lent or keeps for its next tab."""
        return any(page is own for own in (*self._pages.values(), *self._lent, self._spare))

    async def _close_undeclared(self, opener: str, popup: Page) -> None:
        url = popup.url
        with suppress(PlaywrightError):  # it may be gone already
            await popup.close()
        if not url.startswith("chrome-error:"):  # a refused load is reported from the gate
            self._notices.append(_closed_popup(opener, redact(url, self._secrets)))

    @watched
    async def begin(self, plan: Plan) -> None:
        """Close the last iteration's tabs but keep one page, blank-to-be, as the spare.

        The next tab opened takes it and navigates it away (its document and scripts go
        with that navigation), so a kept context does not pay for a new page and its
        origin-gate session every iteration, as a loop that keeps one page does not.
        """
        pages = list(self._pages.values())
        kept = next((p for p in pages if not p.is_closed() and not self._is_lent(p)), None)
        for page in pages:
            self._unlisten(page)
            if page is not kept:
                async with converted_errors("close a tab before the next iteration", tab=""):
                    await page.close()
        self._spare = kept or self._spare
        self._pages.clear()
        self._closed.clear()
        self._blocked.clear()
        self._undeclared.clear()
        self._notices.clear()
        self._plan = plan
        self._secrets = set(plan.secrets) | self._passwords

    def has_tab(self, role: str) -> bool:
        return role in self._pages

    @watched
    async def open_tab(self, tab: BoundTab, *, timeout_ms: int) -> Evidence:
        assert tab.start is not None
        async with self._opening:
            page = (
                self._given.pop(tab.role, None)
                or self._take_spare()
                or await self._context.new_page()
            )
            self._bind(tab.role, page)
        try:
            async with converted_errors(f"open tab {tab.role!r}", tab=tab.role):
                await self._gate.watch(self._context, page, self._guard(tab.role))
            await self._navigate(tab.role, page, tab.start, timeout_ms)
        except NorthstarError:
            await self._discard(tab.role, page)
            raise
        shown = redact(tab.start, self._secrets)
        return Evidence("tab_opened", tab.role, f"open {shown}", True, self._shown_url(page))

    def _take_spare(self) -> Page | None:
        spare, self._spare = self._spare, None
        return None if spare is None or spare.is_closed() else spare

    def _bind(self, role: str, page: Page) -> None:
        self._pages[role] = page
        self._closed.discard(role)
        self._snapshots.pop(role, None)
        self._listen(page, "close", lambda _page: self._on_close(role, _page))
        self._listen(page, "popup", lambda popup: self._on_popup(role, popup))
        self._requests[role] = requests = PageRequests()
        for event, handler in requests.handlers():
            self._listen(page, event, handler)

    def _listen(
        self, emitter: Page | BrowserContext, event: str, handler: Callable[[Any], None]
    ) -> None:
        emitter.on(event, handler)  # type: ignore[call-overload]
        self._listeners.append((emitter, event, handler))

    def _is_lent(self, page: Page) -> bool:
        return any(page is lent for lent in self._lent)

    def _unlisten(self, page: Page) -> None:
        """Stop this session's handlers on ``page`` (it is closed, or kept as the spare)."""
        for emitter, event, handler in [x for x in self._listeners if x[0] is page]:
            emitter.remove_listener(event, handler)
            self._listeners.remove((emitter, event, handler))

    def release(self) -> None:
        """Stop listening: a reused context and its kept page outlive this session."""
        for emitter, event, handler in self._listeners:
            emitter.remove_listener(event, handler)
        self._listeners.clear()

    async def _discard(self, role: str, page: Page) -> None:
        """Forget a role whose destination did not load: it is not open, so a retry reopens it."""
        self._pages.pop(role, None)
        if any(page is lent for lent in self._lent):
            return
        with suppress(PlaywrightError):  # already gone with its context: nothing to close
            await page.close()

    def _on_close(self, role: str, page: Page) -> None:
        if self._pages.get(role) is page:
            del self._pages[role]
            self._closed.add(role)
            if self._plan.adopt_popups:
                self._adopted.append(Evidence("tab_closed", role, "the tab closed", True))

    def page(self, role: str) -> Page:
        """The role's page, or ``TAB_CLOSED`` if it was closed or never opened."""
        if role in self._pages:
            return self._pages[role]
        why = "was closed" if role in self._closed else "is not open"
        raise TabClosed(f"the tab for role {role!r} {why}", tab=role)

    def _readable(self, role: str) -> Page:
        """The role's page, unless it shows a page no tab may load: ``SCHEME_BLOCKED``."""
        page = self.page(role)
        self._refuse_shown(role, page)
        return page

    def _refuse_shown(self, role: str, page: Page) -> None:
        if refused_page_shown(page.url):
            raise SchemeBlocked(
                f"tab {role!r} shows {_shown(page.url, self._secrets)}, which no tab may "
                "load (only http(s) pages); nothing is read from it",
                tab=role,
                fix="Go to an http(s) page of the tab's origins; no step acts on this one.",
            )

    async def _navigate(self, role: str, page: Page, url: str, timeout_ms: int) -> None:
        self._check_origin(role, url)
        try:
            async with (
                named_misses(self.unrecorded, tab=role, secrets=self._secrets),
                converted_errors(f"goto {url}", tab=role, secrets=self._secrets, navigation=True),
            ):
                response = await page.goto(url, timeout=timeout_ms)
        except OriginBlocked:
            self._raise_if_refused(role)  # the gate's reason names the hop that left
            raise
        if response is not None and response.status >= 400:
            raise NavigationFailed(
                f"goto {redact(url, self._secrets)}: the server answered {response.status}",
                tab=role,
                status=response.status,
            )

    def _check_origin(self, role: str, url: str) -> None:
        """Refuse a navigation before it is sent; ``data:`` and the like never reach the gate."""
        reason = page_refusal(url, self._plan.tabs[role].origins)
        if reason == "scheme":
            raise SchemeBlocked(
                f"{_shown(url, self._secrets)} is not an http(s) page: no tab loads it", tab=role
            )
        if reason == "origin":
            raise OriginBlocked(
                f"{redact(url, self._secrets)} is outside the origins of tab {role!r}", tab=role
            )

    @watched
    async def perform(
        self, step: BoundStep, *, before_dispatch: Callable[[], None] = lambda: None
    ) -> tuple[Evidence, ...]:
        self._acting = step.tab
        page = self._readable(step.tab)
        self._blocked.pop(step.tab, None)
        before_dispatch = self._marking(step, before_dispatch)
        if step.opens_tab is None:
            acted_on = await self._act(page, step, before_dispatch)
            self._raise_if_blocked(step.tab)
            return (*acted_on, *await self._take_notices())
        self._awaited = _AwaitedPopup(step.tab, step.opens_tab)
        try:
            async with converted_errors(f"{step.id} opening tab {step.opens_tab!r}", tab=step.tab):
                async with page.expect_popup(timeout=step.timeout_ms) as popup_info:
                    acted_on = await self._act(page, step, before_dispatch)
                popup = await popup_info.value
        finally:
            self._awaited = None
        self._bind(step.opens_tab, popup)
        async with converted_errors("popup load", tab=step.opens_tab, navigation=True):
            await popup.wait_for_load_state("domcontentloaded", timeout=step.timeout_ms)
        self._raise_if_blocked(step.opens_tab)
        found = self._shown_url(popup)
        opened = Evidence("tab_opened", step.opens_tab, f"popup of {step.id}", True, found)
        return (*acted_on, opened, *await self._take_notices())

    def _marking(self, step: BoundStep, before_dispatch: Callable[[], None]) -> Callable[[], None]:
        """``before_dispatch`` that first notes what had left the context (for NOT_SENT)."""
        if not step.is_submit:
            return before_dispatch

        def mark() -> None:
            before_dispatch()
            navigations = self._requests[step.tab].navigations if step.tab in self._requests else 0
            self._sent_mark[step.tab] = (self._context_requests.changing_sent, navigations)

        return mark

    @watched
    async def send_trace(self, tab: str) -> SendTrace:
        changing, navigations = self._sent_mark.get(tab, (0, 0))
        requests = self._requests.get(tab)
        navigated = requests is not None and requests.navigations > navigations
        page = self._pages.get(tab)
        validation = None
        if page is not None and not page.is_closed() and not navigated:
            with suppress(PlaywrightError):  # a page that is going away has no message
                validation = await page.evaluate(_FIRST_INVALID)
        return SendTrace(self._context_requests.changing_sent - changing, navigated, validation)

    def _shown_url(self, page: Page) -> str:
        """A page's URL for evidence: a secret in a query string stays out of the record."""
        return _shown(page.url, self._secrets)

    def _raise_if_blocked(self, role: str) -> None:
        """Report what the gate refused, then a request a replayed recording lacked."""
        self._raise_if_refused(role)
        if self.unrecorded is not None:
            self.unrecorded.raise_new(tab=role, secrets=self._secrets)

    def _raise_if_refused(self, role: str) -> None:
        """``ORIGIN_BLOCKED`` (or ``SCHEME_BLOCKED``) for a refusal on the role's page or by
        an undeclared popup, or for the page it shows now."""
        refused = self._blocked.pop(role, None)
        if refused is not None:
            raise _refused_error(refused, role, self._secrets)
        self._settle_undeclared()
        page = self._pages.get(role)
        if page is not None:
            self._refuse_shown(role, page)

    def _settle_undeclared(self) -> None:
        """Undeclared popups the gate refused: ``ORIGIN_BLOCKED`` if one left, else notices."""
        undeclared, self._undeclared = self._undeclared, []
        for opener, asked in undeclared:
            if not asked.outside:
                self._notices.append(_closed_popup(opener, redact(asked.url, self._secrets)))
        for opener, asked in undeclared:
            if asked.outside:
                raise _undeclared_error(asked, opener, self._secrets)

    async def _take_notices(self) -> tuple[Evidence, ...]:
        # A page the step opened is judged by the gate's answer to its first request, which
        # may come a few milliseconds after the step's action returned.
        await self._gate.settle(self._context, _POPUP_CLOSE_S)
        if self._closing:  # popups the step opened are still being closed: wait, bounded
            await asyncio.wait(set(self._closing), timeout=_POPUP_CLOSE_S)
        self._settle_undeclared()
        await self._settle_adopted()
        notices, self._notices = tuple(self._notices), []
        adopted, self._adopted = tuple(self._adopted), []
        return (*notices, *adopted)

    async def _settle_adopted(self) -> None:
        """Popups the step opened, bound to their roles and loaded (each bounded)."""
        waits = [asyncio.ensure_future(adopting.bound.wait()) for adopting in self._adopting]
        if waits:  # the gate saw them created; Playwright's popup event follows
            _, late = await asyncio.wait(waits, timeout=_POPUP_CLOSE_S)
            for wait in late:
                wait.cancel()
        for seen in list(self._adopted):
            page = self._pages.get(seen.tab)
            if seen.kind == "tab_opened" and page is not None:
                with suppress(PlaywrightError):  # it closed itself already: reported too
                    await page.wait_for_load_state("domcontentloaded", timeout=_POPUP_LOAD_MS)
                await self._refuse_adopted(seen.tab, page)

    async def _refuse_adopted(self, role: str, page: Page) -> None:
        """A popup the gate refused (it headed outside its opener's origins) is closed, not
        kept as a tab: ``ORIGIN_BLOCKED``, as for a popup no step declares."""
        refused = self._blocked.pop(role, None)
        if refused is None:
            return
        self._adopted = [e for e in self._adopted if e.tab != role]
        self._pages.pop(role, None)
        with suppress(PlaywrightError):  # it may be gone already
            await page.close()
        opener = self._acting or self._opener_role()
        raise _undeclared_error(refused, opener, self._secrets)

    @watched
    async def perform_on_reference(
        self,
        step: BoundStep,
        reference: ElementRef,
        *,
        before_dispatch: Callable[[], None] = lambda: None,
    ) -> tuple[Evidence, ...]:
        self._acting = step.tab
        page = self._readable(step.tab)
        locator = await self._referenced(page, step, reference)
        self._blocked.pop(step.tab, None)
        acted_on = await self._act(page, step, before_dispatch, referenced=locator)
        self._raise_if_blocked(step.tab)
        return (*acted_on, *await self._take_notices())

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
        if body.upload is not None:
            step = self._fenced_upload(step, body.upload)
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

    def _fenced_upload(self, step: BoundStep, upload: UploadAction) -> BoundStep:
        """The step with each file as the real file inside the plan's upload folders;
        ``PARAM_INVALID`` naming the first that is not (nothing is sent)."""
        roots = self._plan.upload_roots
        allowed = []
        for path in upload.files:
            real = allowed_upload(path, roots)
            if real is None:
                refused = upload_refused(redact(path, self._secrets), roots, where=step.id)
                raise refused.with_context(tab=step.tab)
            allowed.append(str(real))
        fenced = upload.model_copy(update={"files": allowed})
        return replace(step, step=step.step.model_copy(update={"upload": fenced}))

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
        ready: ActedOn | None = None
        if step.is_submit and referenced is None:  # resolve first: in flight precedes the act
            async with converted_errors(self._what(step), tab=step.tab, secrets=self._secrets):
                async with exactly_one(
                    locator, target, timeout_ms=step.timeout_ms, state=state, secrets=self._secrets
                ):
                    ready = await self._visible_now(locator, step, left())
                if ready is None:  # hidden, or a select still loading: the strict wait decides
                    locator = await resolve_one(
                        page, target, timeout_ms=int(left()), state=state, secrets=self._secrets
                    )
        # Not a submission: the read below waits for the target (strictly) and a failure of
        # the read or the action is diagnosed: missing, ambiguous, or not actionable.
        try:
            acted_on = ready or await self._described(locator, step, left())
            if acted_on.input_type == "password" and step.step.fill is not None:
                self._remember_passwords([step.step.fill.value])
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

    def _remember_passwords(self, values: Collection[str]) -> None:
        self._passwords.update(v for v in values if v)
        self._secrets.update(self._passwords)

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

    async def _visible_now(
        self, locator: Locator, step: BoundStep, timeout_ms: float
    ) -> ActedOn | None:
        """A submission's one element, read as soon as it is attached (one call when it is
        there already); ``None`` while it is hidden, for the strict wait to decide."""
        acted_on = await describe_acted_on(
            locator,
            timeout_ms=timeout_ms,
            submit=True,
            choices=select_choices(step.step.select),
            secrets=self._secrets,
        )
        if not acted_on.visible or acted_on.missing:
            return None  # or a select still loading its options: Playwright's wait decides
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

    @watched
    async def check(self, check: Check, *, tab: str, timeout_ms: int) -> Evidence:
        page = self._readable(tab)
        what = redact(check.describe(), self._secrets)
        try:
            async with converted_errors(what, tab=tab, secrets=self._secrets):
                evidence = await run_check(
                    page,
                    check,
                    tab=tab,
                    timeout_ms=timeout_ms,
                    shown=what,
                    requests=self._requests.get(tab),
                )
        except NorthstarError:
            self._raise_if_refused(tab)  # a refused navigation is why the page is not as expected
            raise
        self._raise_if_blocked(tab)
        return evidence

    @watched
    async def read(self, reading: Reading, *, timeout_ms: int) -> str:
        """Read a value; a secret in it is redacted, as outputs are journaled and shown."""
        page = self.page(reading.tab)
        self._raise_if_refused(reading.tab)  # and a page no tab may load is not read
        value = await self._read_value(page, reading, timeout_ms)
        self._refuse_shown(reading.tab, page)  # nor one the tab went to while it was read
        return value

    async def _read_value(self, page: Page, reading: Reading, timeout_ms: int) -> str:
        source, tab, target = reading.source, reading.tab, reading.target
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

    @watched
    async def observe(self, tab: str) -> Observation:
        # Loaded on first use: the stored path takes no observations.
        from browser_adapters.observation_capture import capture_observation

        self._snapshots.pop(tab, None)  # from here on the page's snapshot is the new one
        page = self._readable(tab)
        async with self._internal_reads():
            observation = await capture_observation(
                page,
                role=tab,
                secret_values=self._secrets,
                seen_passwords=self._remember_passwords,
            )
        self._refuse_shown(tab, page)  # the tab went to such a page while it was read
        self._snapshots[tab] = observation.snapshot_id
        return observation

    @watched
    async def submits_to(self, tab: str, target: Target, *, timeout_ms: int) -> str | None:
        page = self._readable(tab)
        locator = build_locator(page, target)
        async with converted_errors(f"read the form of {target.describe()}", tab=tab):
            if await locator.count() != 1:
                return None
            found = await locator.evaluate(_SUBMITS_TO_JS, timeout=timeout_ms)
        return redact(str(found), self._secrets) if found else None

    @watched
    async def screenshot(self, tab: str) -> bytes | None:
        page = self._pages.get(tab)
        if page is None or refused_page_shown(page.url):
            return None
        async with converted_errors("screenshot", tab=tab):
            return await page.screenshot(timeout=5000)

    def redacted(self, text: str) -> str:
        return redact(text, self._secrets)

    @watched
    async def storage_state(self) -> dict[str, Any]:
        async with converted_errors("save the signed-in state", tab=""):
            state = await self._context.storage_state(indexed_db=True)
        return dict(state)

    @asynccontextmanager
    async def _internal_reads(self) -> AsyncIterator[None]:
        if not self.trace_internal_reads:
            yield
            return
        await self._context.tracing.group("Northstar: read the page")
        try:
            yield
        finally:
            with suppress(PlaywrightError):  # the browser went away: no trace to tidy
                await self._context.tracing.group_end()

    @property
    def context(self) -> BrowserContext:
        """The iteration's context (for tracing and other debugging aids)."""
        return self._context

    def pages(self) -> Mapping[str, Page]:
        """The open pages by role (for observation capture and debugging aids)."""
        return dict(self._pages)


# Where an element submits: its own formaction/formmethod, else its form's; path and query
# only, so a recipe run against another base URL compares the same.
_SUBMITS_TO_JS = """(el) => {
  const form = el.form;
  if (!form) return null;
  const action = new URL(el.getAttribute('formaction') ? el.formAction : form.action);
  const method = (el.getAttribute('formmethod') ? el.formMethod : form.method) || 'get';
  return method.toUpperCase() + ' ' + action.pathname + action.search;
}"""


def _closed_popup(opener: str, url: str) -> Evidence:
    """The record of an undeclared popup that was closed before it could leave the origins."""
    found = f"closed a popup no step declares ({url})"
    return Evidence("popup_closed", opener, "no popup the recipe does not declare", True, found)


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

# The browser's own validation message of the first invalid field, named by its label.
_FIRST_INVALID = """() => {
    const field = document.querySelector("input:invalid, select:invalid, textarea:invalid");
    if (!field) return null;
    const label = field.labels && field.labels[0] ? field.labels[0].innerText.trim() : "";
    const name = label || field.getAttribute("aria-label") || field.name || field.id;
    return `${name}: ${field.validationMessage}`;
}"""


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
        fill, what = body.fill, f"fill {body.fill.target.describe()}"
        return fill.target, lambda loc, t: fill_text(loc, fill, t, what)
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
