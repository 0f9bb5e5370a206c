"""The origin gate: where a tab role's page may go, checked at every hop of every navigation.

Playwright's ``route()`` is never asked about the hops of a redirect (its driver lets them
go on), so an allowed URL answering 302 to another origin would reach that origin. The
gate uses CDP's ``Fetch`` domain on the browser target instead: with request-stage
interception of documents, Chromium pauses each hop of a redirect chain as a request of its
own, before anything is sent to it, in every page and popup from its first request on.
The decision is ``northstar.fences.page_refusal``: another origin, and a ``file:`` page
(which Chromium also fetches through this domain), are failed. Pages loaded without a
request (``data:``, ``blob:``, ``javascript:``) never pause here: the session refuses
them before it navigates and before it reads a page.

One gate serves a browser. A watched page is known by its CDP target id, which is also the
id of its main frame; its ``PageGuard`` says which origins it may load, whom to tell when it
may not, which guard a popup it opens gets, and which guard any other new page of its
context gets: a tab opened with a middle-click or a modifier key has no opener, and is
gated from its first request all the same. Documents of subframes and of pages in contexts
nobody watches go on unasked. A refused request fails with ``net::ERR_BLOCKED_BY_CLIENT``.

A page no step declares is *undecided* from its creation until the gate has answered its
first document request (or it is gone, or a tab's guard replaced its own). ``settle`` waits
for a context's undecided pages, so the step that opened one is answered from the gate's
verdict, whichever of the step's return and the page's first request comes first.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Browser, BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from northstar.fences import PageRefusal, page_refusal

__all__ = ["OriginGate", "PageGuard", "Refusal", "refusal"]

# Only documents pause: images, scripts and fetches are not navigations and go on unasked.
_DOCUMENTS = {"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}


@dataclass(frozen=True)
class Refusal:
    """A document request the gate failed before it was sent."""

    url: str
    redirected_from: str | None = None  # the hop whose answer redirected here
    # Why the page may not load it; ``None``: only because its popup was not declared.
    reason: PageRefusal | None = "origin"

    @property
    def outside(self) -> bool:
        """Whether the request would have left the page's origins (or its web pages)."""
        return self.reason is not None


def _refusing() -> PageGuard:
    """The guard of a new page in a context whose sessions named none: it loads nothing."""
    return PageGuard(frozenset(), lambda refused: None, _refusing, undeclared=True)


@dataclass(frozen=True)
class PageGuard:
    """What one page may load at top level, who hears of a refusal, and the guards of the
    pages it opens: its popups', and any other new page's in its context (``on_new_page``).

    ``undeclared`` marks a popup no step was waiting for: every document it asks for is
    refused, and the refusal's ``reason`` tells whether it would also have left its origins.
    """

    origins: frozenset[str]
    on_refused: Callable[[Refusal], None]
    on_popup: Callable[[], PageGuard]
    undeclared: bool = False
    on_new_page: Callable[[], PageGuard] = _refusing


def refusal(guard: PageGuard, url: str, redirected_from: str | None) -> Refusal | None:
    """Whether the page may load ``url`` (``redirected_from``: the hop that sent it there)."""
    reason = page_refusal(url, guard.origins)
    if reason is not None or guard.undeclared:
        return Refusal(url, redirected_from, reason)
    return None


@dataclass
class _Watched:
    guard: PageGuard
    last_url: str | None = None  # the page's previous document request: a redirect's source


class OriginGate:
    """Request-stage interception of documents on the browser's own CDP session."""

    def __init__(self, cdp: CDPSession) -> None:
        self._cdp = cdp
        self._watched: dict[str, _Watched] = {}
        # By browser context id: the guard of a page it opens with no watched opener.
        self._new_pages: dict[str, Callable[[], PageGuard]] = {}
        self._hooked: weakref.WeakSet[BrowserContext] = weakref.WeakSet()
        # A page's target id and context id, asked once: a reused context's kept page is
        # watched again every iteration, and a CDP session per watch would pile up on it.
        self._targets: weakref.WeakKeyDictionary[Page, tuple[str, str]] = (
            weakref.WeakKeyDictionary()
        )
        self._replies: set[asyncio.Task[None]] = set()
        # Pages no step declares, by target id, until their first document is answered: the
        # context id they belong to and the event set then.
        self._undecided: dict[str, tuple[str, asyncio.Event]] = {}
        self._context_ids: weakref.WeakKeyDictionary[BrowserContext, str] = (
            weakref.WeakKeyDictionary()
        )

    @classmethod
    async def open(cls, browser: Browser) -> OriginGate:
        """Start intercepting every document request of ``browser``; before any page opens."""
        cdp = await browser.new_browser_cdp_session()
        gate = cls(cdp)
        cdp.on("Target.targetCreated", gate._on_target_created)
        cdp.on("Target.targetDestroyed", gate._on_target_destroyed)
        cdp.on("Fetch.requestPaused", gate._on_request_paused)
        await cdp.send("Target.setDiscoverTargets", {"discover": True})
        await cdp.send("Fetch.enable", {"patterns": [_DOCUMENTS]})
        return gate

    async def close(self) -> None:
        """Stop intercepting (a borrowed browser goes on without the gate)."""
        with suppress(PlaywrightError):  # the browser may be gone, and its session with it
            await self._cdp.detach()

    async def watch(self, context: BrowserContext, page: Page, guard: PageGuard) -> None:
        """Guard ``page`` from its next navigation on (a new guard replaces an earlier one),
        and every page its context opens from now on with no watched opener.

        Call it before the page's first navigation of the iteration.
        """
        known = self._targets.get(page)
        if known is None:
            # The session goes away with the page; detaching it would cost one more round trip.
            cdp = await context.new_cdp_session(page)
            info = (await cdp.send("Target.getTargetInfo"))["targetInfo"]
            known = self._targets[page] = (info["targetId"], info["browserContextId"])
            self._forget_on_close(context, known[1])
        target, context_id = known
        self._watched[target] = _Watched(guard)
        self._new_pages[context_id] = guard.on_new_page
        self._context_ids[context] = context_id
        if not guard.undeclared:  # the session's own new page, now a tab's
            self._decided(target)

    async def settle(self, context: BrowserContext, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) until every page no step declares that ``context``
        has opened so far has had its first document answered, or is gone.

        The round trip comes first: Chromium reports a page an input event opens before it
        acknowledges the event, and its events on this session arrive in order, so once the
        answer is back every page the last action opened is known here. Without this wait a
        step could return, and be judged, in the few milliseconds before its popup's first
        request reaches the gate (it happened on a quiet machine).
        """
        context_id = self._context_ids.get(context)
        if context_id is None:
            return
        with suppress(PlaywrightError):  # the browser is gone: nothing more will open
            await self._cdp.send("Browser.getVersion")
        waits = [
            asyncio.ensure_future(decided.wait())
            for owner, decided in self._undecided.values()
            if owner == context_id
        ]
        if not waits:
            return
        _, late = await asyncio.wait(waits, timeout=timeout_s)
        for wait in late:
            wait.cancel()

    def _decided(self, target: str) -> None:
        undecided = self._undecided.pop(target, None)
        if undecided is not None:
            undecided[1].set()

    def _forget_on_close(self, context: BrowserContext, context_id: str) -> None:
        if context not in self._hooked:
            self._hooked.add(context)
            context.once("close", lambda _context: self._forget(context_id))

    def _forget(self, context_id: str) -> None:
        self._new_pages.pop(context_id, None)

    def _on_target_created(self, event: dict[str, Any]) -> None:
        # Chromium reports a new page before its first request: its guard is in place in time.
        info = event["targetInfo"]
        if info.get("type") != "page":
            return
        opener = self._watched.get(info.get("openerId") or "")
        context_id = info.get("browserContextId") or ""
        if opener is not None:
            guard = opener.guard.on_popup()
        elif context_id in self._new_pages:  # a middle-click, a modifier key, or the session's
            guard = self._new_pages[context_id]()  # own page
        else:
            return
        self._watched[info["targetId"]] = _Watched(guard)
        if guard.undeclared:
            self._undecided[info["targetId"]] = (context_id, asyncio.Event())

    def _on_target_destroyed(self, event: dict[str, Any]) -> None:
        self._watched.pop(event["targetId"], None)
        self._decided(event["targetId"])

    def _on_request_paused(self, event: dict[str, Any]) -> None:
        request_id = event["requestId"]
        frame = event.get("frameId") or ""
        watched = self._watched.get(frame)
        if watched is None:  # a subframe, or a page of no tab role
            self._reply("Fetch.continueRequest", {"requestId": request_id})
            return
        self._decided(frame)  # its waiters run after this handler: a refusal is told by then
        url = event["request"]["url"]
        source = watched.last_url if event.get("redirectedRequestId") else None
        watched.last_url = url
        refused = refusal(watched.guard, url, source)
        if refused is None:
            self._reply("Fetch.continueRequest", {"requestId": request_id})
            return
        # Told before the request fails, so a caller that sees the failure finds the reason.
        watched.guard.on_refused(refused)
        failure = {"requestId": request_id, "errorReason": "BlockedByClient"}
        self._reply("Fetch.failRequest", failure)

    def _reply(self, method: str, params: dict[str, Any]) -> None:
        task = asyncio.get_running_loop().create_task(_send(self._cdp, method, params))
        self._replies.add(task)  # held until done: a task nobody references may be collected
        task.add_done_callback(self._replies.discard)


async def _send(cdp: CDPSession, method: str, params: dict[str, Any]) -> None:
    # The request's page or the browser may be gone by now; then nothing waits for the reply.
    with suppress(PlaywrightError):
        await cdp.send(method, params)
