"""``AgentHost``: exploration sessions an agent drives on one shared browser host.

Each session is a run in the journal (its id is the session id, its credential the run's:
random, only its hash is kept) with one iteration, one browser context from the host
(its tab roles guarded by the adapter's origin guard exactly as a recipe's), a
``BehaviorMonitor`` and a view of each tab (``northstar.agent.session``).

Every call but ``open_session`` presents the session id and credential
(``CREDENTIALS_INVALID`` otherwise, also once the session is closed). Calls on one session
run one at a time; sessions run side by side on the shared browser.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Self, Unpack
from urllib.parse import urlsplit

import structlog
from pydantic import ValidationError

from northstar.agent.actions import ActOptions, act_request
from northstar.agent.answers import (
    ActAnswer,
    CheckAnswer,
    ObserveAnswer,
    RecipeSaved,
    SessionClosed,
    SessionOpened,
    TabsAnswer,
)
from northstar.agent.dry_replay import prove_recipe
from northstar.agent.recipe_draft import draft_recipe
from northstar.agent.recipe_file import write_recipe
from northstar.agent.session import ITERATION, SessionCore
from northstar.agent.settings import AgentSettings
from northstar.agent.tabs import bind_session_tabs
from northstar.browser import BrowserHost
from northstar.browser.settings import BrowserSettings
from northstar.composition import open_host
from northstar.errors import CredentialsInvalid, NorthstarError, UsageInvalid
from northstar.journal import Journal
from northstar.plan.model import BoundTab, Plan
from northstar.recipe.model import Check
from northstar.results import IterationState
from northstar.run.failpoints import failpoint_from_environ

__all__ = ["AgentHost", "open_agent_host"]

log = structlog.get_logger("northstar.agent")


def _session_plan(tabs: Mapping[str, BoundTab], settings: AgentSettings) -> Plan:
    """The plan a session's context is guarded by: its tab roles and the folder its uploads
    come from, no steps of its own."""
    canonical = {role: [tab.start, list(tab.origins)] for role, tab in sorted(tabs.items())}
    digest = hashlib.sha256(json.dumps(canonical).encode()).hexdigest()
    return Plan(
        recipe_name="agent-session",
        recipe_version=1,
        definition_hash=digest,
        iteration=ITERATION,
        tabs=dict(tabs),
        steps=(),
        outputs=(),
        done_when=(),
        default_timeout_ms=settings.open_timeout_ms,
        params_fingerprint="",
        upload_roots=() if settings.files_dir is None else (str(settings.files_dir.resolve()),),
        adopt_popups=True,
    )


class AgentHost:
    """Sessions an agent drives; see ``northstar.agent`` for the calls and their answers."""

    def __init__(
        self,
        host: BrowserHost,
        journal: Journal,
        *,
        settings: AgentSettings | None = None,
        project: str = "agent",
        recipes: str | Path = "recipes",
    ) -> None:
        self._host = host
        self._journal = journal
        self.settings = settings or AgentSettings()
        self._project = project
        self.recipes = Path(recipes)  # where save_recipe writes NAME.yaml
        self._sessions: dict[str, SessionCore] = {}
        self._contexts: dict[str, AsyncExitStack] = {}  # each session's browser context

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every open session (each context, and its run in the journal)."""
        while self._sessions:
            _, session = self._sessions.popitem()
            async with session.lock:
                await self._close(session)

    # Sessions

    async def open_session(
        self, tabs: Mapping[str, Any], *, state: str | Path | None = None
    ) -> SessionOpened:
        """A new session with a context of its own, each tab role open at its start URL.

        ``state``: a storage-state file (``northstar sign-in --save-state``) the context
        starts from, so the session is signed in as a run with ``--state`` is; without it
        the host's own (``northstar mcp --state``), else a clean context. The file is a
        secret: only whether one was used is journaled, never its path or contents.
        """
        state_path = _state_file(state)
        bound = bind_session_tabs(tabs)
        plan = _session_plan(bound, self.settings)
        run_id, credential = self._journal.create_run(
            recipe_path="(agent session)",
            recipe_name=plan.recipe_name,
            definition_hash=plan.definition_hash,
            project=self._project,
            profile="",
            params_fingerprint="",
            total_iterations=1,
            options={
                "front_end": "agent",
                "origins": {r: t.origins for r, t in bound.items()},
                "signed_in_from_state": state_path is not None,
            },
        )
        self._journal.start_iteration(run_id, ITERATION, params_fingerprint="")
        self._sessions[run_id] = await self._start(run_id, plan, state_path)
        self._journal.event(run_id, "agent_session_opened", tabs=sorted(bound))
        log.info("agent_session_opened", session=run_id, tabs=sorted(bound))
        opened = {role: tab.start or "" for role, tab in bound.items()}
        return SessionOpened(session_id=run_id, credential=credential, tabs=opened)

    async def _start(self, run_id: str, plan: Plan, state: str | None) -> SessionCore:
        stack = AsyncExitStack()
        context = (
            self._host.session(plan)
            if state is None
            else self._host.session(plan, storage_state=state)
        )
        try:
            browser = await stack.enter_async_context(context)
            for tab in plan.tabs.values():
                await browser.open_tab(tab, timeout_ms=plan.default_timeout_ms)
        except BaseException as exc:
            await stack.aclose()
            code = exc.code if isinstance(exc, NorthstarError) else type(exc).__name__
            self._journal.mark_iteration(run_id, ITERATION, IterationState.FAILED, reason_code=code)
            self._journal.finish_run(run_id, "failed")
            raise
        self._contexts[run_id] = stack
        failpoint = failpoint_from_environ()  # the kill trials' pauses, as in a run
        return SessionCore(run_id, plan, browser, self._journal, self.settings, failpoint=failpoint)

    async def close_session(self, session_id: str, credential: str) -> SessionClosed:
        """Close the session's context; its run ends ``stopped`` (``blocked`` if unsettled)."""
        async with self._locked(session_id, credential) as session:
            del self._sessions[session_id]
            status = await self._close(session)
        return SessionClosed(session_id=session_id, status=status)

    async def _close(self, session: SessionCore) -> str:
        run_id = session.session_id
        await self._contexts.pop(run_id).aclose()
        unsettled = self._journal.open_submissions(run_id, ITERATION)
        state = IterationState.UNKNOWN if unsettled else IterationState.STOPPED
        reason = "a submission's outcome is unknown" if unsettled else "the agent closed it"
        self._journal.mark_iteration(
            run_id, ITERATION, state, reason_code="AGENT_SESSION_CLOSED", reason=reason
        )
        status = "blocked" if unsettled else "stopped"
        self._journal.finish_run(run_id, status)
        self._journal.event(run_id, "agent_session_closed", status=status)
        log.info("agent_session_closed", session=run_id, status=status)
        return status

    @asynccontextmanager
    async def _locked(self, session_id: str, credential: str) -> AsyncIterator[SessionCore]:
        """The session, its credential checked, held for one call at a time."""
        session = self._open(session_id)
        self._journal.check_credential(session_id, credential)  # constant-time, hash only
        async with session.lock:
            if self._sessions.get(session_id) is not session:  # closed while we waited
                raise _no_session(session_id)
            yield session

    def _open(self, session_id: str) -> SessionCore:
        session = self._sessions.get(session_id)
        if session is None:
            raise _no_session(session_id)
        return session

    # Calls

    async def observe(
        self, session_id: str, credential: str, tab: str, *, full: bool = False
    ) -> ObserveAnswer:
        """The tab's page: whole the first time (or when asked), else what changed."""
        async with self._locked(session_id, credential) as session:
            return await session.look(tab, full=full)

    async def act(
        self,
        session_id: str,
        credential: str,
        tab: str,
        action: str,
        *,
        timeout_ms: int | None = None,
        **options: Unpack[ActOptions],
    ) -> ActAnswer:
        """Do one action on a tab, then observe it; see ``northstar.agent.actions``."""
        request = act_request(tab, action, **options)
        waited = self._timeout(timeout_ms, self.settings.action_timeout_ms)
        async with self._locked(session_id, credential) as session:
            return await session.act(request, waited)

    async def tabs(self, session_id: str, credential: str) -> TabsAnswer:
        """The session's open tabs, popups its actions opened included."""
        async with self._locked(session_id, credential) as session:
            listed = session.tab_list()
        keys = ("role", "url", "opened_by")
        return TabsAnswer(tabs=[dict(zip(keys, tab, strict=True)) for tab in listed])

    async def check(
        self,
        session_id: str,
        credential: str,
        tab: str,
        check: Check | Mapping[str, Any],
        *,
        timeout_ms: int | None = None,
    ) -> CheckAnswer:
        """Whether a recipe check holds on the tab, waiting for it up to ``timeout_ms``."""
        checked = _check(check)
        waited = self._timeout(timeout_ms, self.settings.check_timeout_ms)
        async with self._locked(session_id, credential) as session:
            return await session.check(tab, checked, waited)

    async def save_recipe(
        self,
        session_id: str,
        credential: str,
        name: str,
        params: Mapping[str, str] | None = None,
        *,
        overwrite: bool = False,
    ) -> RecipeSaved:
        """The session's executed actions as ``recipes/NAME.yaml``; see ``recipe_draft``.

        ``params`` renames proposed parameters (``{"name": "sender"}``). The session stays
        open. Nothing is written unless the recipe validates, and an existing file only
        with ``overwrite``.
        """
        async with self._locked(session_id, credential) as session:
            history = list(session.history)
            tabs = session.plan.tabs
        drafted = draft_recipe(
            name, tabs, history, renames=dict(params or {}), session_id=session_id
        )
        path, digest = write_recipe(self.recipes, drafted, overwrite=overwrite)
        proof = await prove_recipe(self._host, path, _site_of(tabs))
        kinds = {p: "secret" if s.get("secret") else "default" for p, s in drafted.params.items()}
        self._journal.event(session_id, "agent_recipe_saved", recipe=name, path=str(path))
        log.info("agent_recipe_saved", session=session_id, name=name, path=str(path))
        return RecipeSaved(
            session_id=session_id,
            name=name,
            path=str(path),
            definition_hash=digest,
            params=kinds,
            yaml=drafted.text,
            param_reasons=drafted.reasons,
            proof=proof,
            not_unique=drafted.not_unique,
        )

    def _timeout(self, given: int | None, default: int) -> int:
        if given is None:
            return default
        if not 1 <= given <= 600_000:
            raise UsageInvalid(
                f"timeout_ms={given} is out of bounds", fix="Pass 1 to 600000 milliseconds."
            )
        return given


@asynccontextmanager
async def open_agent_host(
    browser: BrowserSettings | None = None,
    *,
    journal_path: str | Path | None = None,
    settings: AgentSettings | None = None,
    recipes: str | Path = "recipes",
) -> AsyncIterator[AgentHost]:
    """An ``AgentHost`` with its own journal and browser, all closed on every path."""
    with Journal.open(journal_path) as journal:
        async with (
            open_host(browser or BrowserSettings()) as host,
            AgentHost(host, journal, settings=settings, recipes=recipes) as agents,
        ):
            yield agents


def _state_file(state: str | Path | None) -> str | None:
    """The state file as an absolute path, refused at once when it is not a file."""
    if state is None:
        return None
    path = Path(state)
    if not path.is_file():
        raise UsageInvalid(
            f"the signed-in state {path} is not a file",
            fix="Save one with `northstar sign-in RECIPE --save-state FILE` and give that FILE.",
        )
    return str(path.resolve())


def _site_of(tabs: Mapping[str, BoundTab]) -> str:
    """The origin the saved recipe's ``{{ base_url }}`` stands for: the first role's."""
    parts = urlsplit(next(iter(tabs.values())).start or "")
    return f"{parts.scheme}://{parts.netloc}"


def _no_session(session_id: str) -> CredentialsInvalid:
    return CredentialsInvalid(
        f"no open agent session {session_id!r} with that credential",
        fix="Open a session with open_session and present the id and credential it returned.",
    )


def _check(raw: Check | Mapping[str, Any]) -> Check:
    if isinstance(raw, Check):
        return raw
    try:
        return Check.model_validate(raw)
    except ValidationError as exc:
        raise UsageInvalid(
            f"check: {exc.errors()[0]['msg']}",
            fix='Pass a recipe check, e.g. {"visible": {"role": "heading", "name": "Thanks"}}.',
        ) from None
