"""Explore when no program fits: the agent sessions (``northstar.agent``) as MCP tools.

``open_session``, ``observe``, ``act``, ``tabs``, ``check``, ``save_recipe`` and
``close_session`` are
one call each of
``northstar.agent.AgentHost``, on the server's one browser (``SharedBrowser``) and its
journal, so a session has the origins, credentials, at-most-once submissions and loop
signals of the Python API, checked in one place. An answer's ``text`` (what a model reads)
is the tool's content and its fields are the structured content; an expected error is
the CLI's coded line (``tool_results.refusal``).

The ``AgentHost`` (and the journal connection it writes through) is made by the first
``open_session``, so nothing is launched or created before a session is asked for; a call
on a session before that is refused like one on any unknown session. ``aclose``, at
server shutdown, closes the sessions still open: each run ends ``stopped``, or
``blocked`` if a submission's outcome is unknown. ``save_recipe`` writes into the server's
first ``--recipes`` folder, so the saved procedure is a program the next ``list_programs``
offers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations

from northstar.agent import AgentHost, AgentSettings, SessionOpened
from northstar.agent.tabs import bind_session_tabs
from northstar.errors import CredentialsInvalid, NorthstarError
from northstar.journal import Journal
from northstar.mcp.shared_browser import SharedBrowser
from northstar.mcp.tool_results import refusal, told

__all__ = [
    "ExploreSettings",
    "ExploreTools",
    "ExploreToolset",
    "opened_text",
    "register_tools",
]

_A = TypeVar("_A")


@dataclass(frozen=True)
class ExploreSettings:
    journal_path: Path
    project: str = "default"
    agent: AgentSettings = field(default_factory=AgentSettings)
    recipes: Path = Path("recipes")  # where save_recipe writes NAME.yaml


def opened_text(opened: SessionOpened) -> str:
    """The agent API keeps the credential out of ``text``; over MCP the text may be all a
    model reads, and without the credential it could not make another call."""
    return f"{opened.text}\ncredential: {opened.credential} (pass it and session_id on every call)"


class ExploreTools:
    """The sessions' ``AgentHost``, made on the first ``open_session``, closed by ``aclose``."""

    def __init__(self, settings: ExploreSettings, browser: SharedBrowser) -> None:
        self.settings = settings
        self.browser = browser
        self._stack = AsyncExitStack()
        self._agents: AgentHost | None = None
        self._lock = asyncio.Lock()  # two first open_session calls make one AgentHost

    async def opening(self) -> AgentHost:
        """The host for a new session: the browser and the journal are opened on first use."""
        async with self._lock:
            if self._agents is None:
                host = await self.browser.host()
                journal = self._stack.enter_context(Journal.open(self.settings.journal_path))
                agents = AgentHost(
                    host,
                    journal,
                    settings=self.settings.agent,
                    project=self.settings.project,
                    recipes=self.settings.recipes,
                )
                self._agents = await self._stack.enter_async_context(agents)
            return self._agents

    def running(self, session_id: str) -> AgentHost:
        """The host of open sessions; before any was opened, the session is unknown."""
        if self._agents is None:
            raise CredentialsInvalid(
                f"no open agent session {session_id!r} with that credential",
                fix="Open a session with open_session and present the id and credential "
                "it returned.",
            )
        return self._agents

    async def aclose(self) -> None:
        """Close every open session (journaled), then the journal; the browser is not ours."""
        async with self._lock:
            self._agents = None
            await self._stack.aclose()


async def _replied(work: Awaitable[Any]) -> CallToolResult:
    """An agent answer as a tool result (its text, its fields); a coded error as a refusal."""
    try:
        answer = await work
    except NorthstarError as exc:
        return refusal(exc)
    if isinstance(answer, CallToolResult):
        return answer
    fields = getattr(answer, "fields", None)
    data = fields() if fields is not None else answer.model_dump(mode="json")
    return told(answer.text, data)


class ExploreToolset:
    """The tools, one method each; their docstrings are what an agent reads."""

    def __init__(self, explore: ExploreTools) -> None:
        self._explore = explore

    async def open_session(self, tabs: dict[str, Any]) -> CallToolResult:
        """Explore only when no program fits. Opens a browser context of its own:
        tabs = {"role": {"start": "http://host/path", "origins": ["http://host"]}}
        (origins default to the start URL's; leaving them is ORIGIN_BLOCKED). Answers
        session_id and credential: keep both, every other call needs them."""
        return await _replied(self._open(tabs))

    async def _open(self, tabs: dict[str, Any]) -> CallToolResult:
        bind_session_tabs(tabs)  # a wrong one is refused before a browser is launched
        opened = await (await self._explore.opening()).open_session(tabs)
        # The tabs and their URLs are in the text; the fields are what a program reuses.
        data = opened.model_dump(mode="json", include={"session_id", "credential"})
        return told(opened_text(opened), data)

    async def observe(
        self, session_id: str, credential: str, tab: str, full: bool = False
    ) -> CallToolResult:
        """A tab's page as text with element references [ref=eN]: the whole page the first
        time, on a new URL or with full=true; otherwise only what changed since the tab's
        last observation (~ changed, + added, - removed)."""
        return await _replied(
            self._on(
                session_id, lambda agents: agents.observe(session_id, credential, tab, full=full)
            )
        )

    async def act(
        self,
        session_id: str,
        credential: str,
        tab: str,
        action: str,
        ref: str | None = None,
        target: dict[str, Any] | None = None,
        value: str | list[str] | None = None,
        submit: bool = False,
        key: str | None = None,
        timeout_ms: int | None = None,
    ) -> CallToolResult:
        """One action, then what changed on the tab. action: click, fill, select, check,
        uncheck, hover, press, upload or goto. On a ref of the tab's latest observation
        (an older one is STALE_REFERENCE) or a target ({"role": "button", "name": "Send"},
        {"label": ...}, {"text": ...}). value: the text, option(s), key, file(s) or URL.
        submit=true for anything that sends or saves: journaled first and sent at most
        once; the same call again (or the same key) answers the first result."""
        return await _replied(
            self._on(
                session_id,
                lambda agents: agents.act(
                    session_id,
                    credential,
                    tab,
                    action,
                    timeout_ms=timeout_ms,
                    ref=ref,
                    target=target,
                    value=value,
                    submit=submit,
                    key=key,
                ),
            )
        )

    async def tabs(self, session_id: str, credential: str) -> CallToolResult:
        """The session's open tabs: each role, the URL it showed last, and the role that
        opened it. A popup or new tab an action opens becomes a role (popup-1, ...) that
        act and observe take as tab; the act answer names it too."""
        return await _replied(
            self._on(session_id, lambda agents: agents.tabs(session_id, credential))
        )

    async def check(
        self,
        session_id: str,
        credential: str,
        tab: str,
        check: dict[str, Any],
        timeout_ms: int | None = None,
    ) -> CallToolResult:
        """Wait for a recipe check on the tab and say whether it held; changes nothing.
        check: {"visible": {"role": "heading", "name": "Thanks"}}, {"url": "**/done*"},
        {"title": {"contains": "Saved"}}, {"hidden": {"text": "Loading"}} ..."""
        return await _replied(
            self._on(
                session_id,
                lambda agents: agents.check(
                    session_id, credential, tab, check, timeout_ms=timeout_ms
                ),
            )
        )

    async def save_recipe(
        self,
        session_id: str,
        credential: str,
        name: str,
        params: dict[str, str] | None = None,
        overwrite: bool = False,
    ) -> CallToolResult:
        """Save what this session did as a program (recipes/NAME.yaml) that then runs with no
        model: its successful actions as steps, typed values as parameters (a password as a
        secret, never written), expectations from what each action visibly changed. A
        submission with no visible result is refused by step name: check its result first.
        name: lower-case letters, digits, - or _. params: rename proposed parameters
        ({"name": "sender"}). An existing file is kept unless overwrite=true. Answers the
        path, the definition hash and the YAML."""
        return await _replied(
            self._on(
                session_id,
                lambda agents: agents.save_recipe(
                    session_id, credential, name, params, overwrite=overwrite
                ),
            )
        )

    async def close_session(self, session_id: str, credential: str) -> CallToolResult:
        """Close the session's browser context. Its run ends stopped, or blocked when a
        submission's outcome is unknown."""
        return await _replied(
            self._on(session_id, lambda agents: agents.close_session(session_id, credential))
        )

    async def _on(self, session_id: str, use: Callable[[AgentHost], Awaitable[_A]]) -> _A:
        """``use`` on the host of open sessions; an unknown session is refused in here, so
        ``_replied`` turns it into the coded line."""
        return await use(self._explore.running(session_id))


_ANNOTATIONS = {
    "open_session": ToolAnnotations(destructive_hint=False),
    "observe": ToolAnnotations(read_only_hint=True),
    "act": ToolAnnotations(destructive_hint=True),
    "tabs": ToolAnnotations(read_only_hint=True),
    "check": ToolAnnotations(read_only_hint=True),
    "save_recipe": ToolAnnotations(destructive_hint=False),
    "close_session": ToolAnnotations(destructive_hint=False),
}


def register_tools(server: MCPServer[Any], explore: ExploreTools) -> None:
    """open_session, observe, act, tabs, check, save_recipe, close_session, in that order."""
    toolset = ExploreToolset(explore)
    for name, hints in _ANNOTATIONS.items():
        server.add_tool(getattr(toolset, name), annotations=hints)
