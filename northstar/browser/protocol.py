"""The protocol a browser adapter implements; the core depends on nothing else.

The runner asks a ``BrowserHost`` for one ``BrowserSession`` per iteration and drives it
step by step. Adapters convert their library's errors to ``NorthstarError``s, so the core
only ever sees stable codes. ``browser_adapters`` is the real implementation.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self

from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, Target
from northstar.results import Evidence

if TYPE_CHECKING:
    from northstar.monitor.observation import ElementRef, Observation

__all__ = ["BrowserHost", "BrowserSession", "ReadSource", "Reading", "SendTrace"]

ReadSource = Literal["url", "text", "attribute", "value", "title"]


@dataclass(frozen=True, slots=True)
class Reading:
    """What to read from a tab: its URL or title, or a target's text, attribute or value.

    An output, an ``extract`` step and the monitor's URL probe all ask for one.
    """

    source: ReadSource
    tab: str
    target: Target | None = None
    attribute: str | None = None


@dataclass(frozen=True, slots=True)
class SendTrace:
    """What left a tab's context since its last submit action was let act.

    ``changing_requests``: requests by a method other than GET/HEAD/OPTIONS, from any page
    of the context (a form's POST, a ``fetch``, a beacon). ``navigated``: the tab's page
    loaded another document. ``validation``: the browser's validation message of the first
    invalid field, named by its label (``"Email: Please fill out this field."``), if any.
    """

    changing_requests: int
    navigated: bool
    validation: str | None = None


class BrowserSession(Protocol):
    """One iteration's browser context: one page per opened tab role."""

    async def begin(self, plan: Plan) -> None:
        """Start another iteration in this context: close its tabs, keep its cookies."""
        ...

    def has_tab(self, role: str) -> bool:
        """Whether the role's page is open in this session."""
        ...

    async def open_tab(self, tab: BoundTab, *, timeout_ms: int) -> Evidence:
        """Open a page for a ``start`` role and load its destination."""
        ...

    async def perform(
        self, step: BoundStep, *, before_dispatch: Callable[[], None] = ...
    ) -> tuple[Evidence, ...]:
        """Run an action step; when ``step.opens_tab`` is set, bind the popup to that role.

        ``before_dispatch`` is called once the target is resolved, immediately before the
        action itself: an error raised before that call means nothing was sent.
        """
        ...

    async def perform_on_reference(
        self,
        step: BoundStep,
        reference: ElementRef,
        *,
        before_dispatch: Callable[[], None] = ...,
    ) -> tuple[Evidence, ...]:
        """Run an action step on the element ``reference`` names (an agent's act by ref).

        The step's own target only describes the element (role and name, for messages).
        ``reference`` must come from the tab's latest ``observe`` and its element must
        still be on the page: otherwise ``StaleReference``, raised before ``before_dispatch``,
        so nothing was sent. ``before_dispatch`` is called as for ``perform``.
        """
        ...

    async def check(self, check: Check, *, tab: str, timeout_ms: int) -> Evidence:
        """Wait until the check holds (auto-waiting) or raise ``ExpectationFailed``."""
        ...

    async def send_trace(self, tab: str) -> SendTrace:
        """What left the context since the tab's last submit action (see ``SendTrace``)."""
        ...

    async def read(self, reading: Reading, *, timeout_ms: int) -> str:
        """Read a value from a tab: its URL or title, or a target's text, attribute or value."""
        ...

    async def observe(self, tab: str) -> Observation:
        """A structured reading of the role's page (secret values redacted).

        Its references are the ones ``perform_on_reference`` accepts, until the next one.
        """
        ...

    async def submits_to(self, tab: str, target: Target, *, timeout_ms: int) -> str | None:
        """Where the target's one element submits: ``"METHOD /path?query"`` of its form (its
        own ``formaction``/``formmethod`` first), or ``None`` if it submits no form or does
        not resolve to one element. Reads only; for ranking repair candidates.
        """
        ...

    async def screenshot(self, tab: str) -> bytes | None:
        """A PNG of the role's page, or ``None`` if it is not open."""
        ...

    def redacted(self, text: str) -> str:
        """``text`` without any secret this session knows: the plan's, and every value seen
        in or typed into a password field so far (an agent's check may repeat one)."""
        ...

    async def storage_state(self) -> dict[str, Any]:
        """The context's cookies and storage (IndexedDB included), as a storage-state file
        holds them. It is a secret (live session cookies): never log or journal it."""
        ...


class BrowserHost(Protocol):
    """Owns the browser for a run; hands out one session per iteration.

    Used as ``async with host:`` so the browser is closed on every path.
    """

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def session(
        self, plan: Plan, *, storage_state: str | None = None
    ) -> AbstractAsyncContextManager[BrowserSession]:
        """A fresh context for one iteration, closed on every path.

        ``storage_state``: a storage-state file the context starts from (the run's
        identity, ``northstar.run.identity``), instead of the host's own profile.
        """
        ...

    def read_only(self, storage_state: str | None) -> BrowserHost:
        """A host on the same browser whose sessions can send nothing, for probes.

        Each of its sessions is a new context created from ``storage_state`` (the run's
        signed-in state; ``None``: a fresh one) in which only GET and HEAD requests go out:
        any other request is aborted before it is sent, and logged. The browser stays this
        host's: the returned host is used without ``async with``.
        """
        ...
