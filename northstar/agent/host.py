"""``AgentHost``: exploration sessions an agent drives on one shared browser host.

The driver around the decisions of this package. Each session is a run in the journal
(its id is the session id, its credential the run's: random, only its hash is kept) with
one iteration, one browser context from the host (its tab roles guarded by the adapter's
origin guard exactly as a recipe's), a ``BehaviorMonitor`` and a ``TabView`` per tab.

Every call but ``open_session`` presents the session id and credential
(``CREDENTIALS_INVALID`` otherwise). Calls on one session run one at a time; sessions
run side by side on the shared browser. Every action is journaled as a step through the
runner's ``IterationRecorder``; a submission is written in flight, durably, right before
it is dispatched, and the same call again returns the answer recorded the first time.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import structlog
from pydantic import ValidationError

from northstar.agent.actions import (
    ActRequest,
    act_request,
    build_step,
    element_target,
    input_fingerprint,
    submission_step_id,
)
from northstar.agent.answers import (
    ActAnswer,
    CheckAnswer,
    ObserveAnswer,
    SessionClosed,
    SessionOpened,
    with_signal,
)
from northstar.agent.references import TabView, resolve, shows_whole_page
from northstar.agent.rendering import render_changes, render_page
from northstar.agent.settings import AgentSettings
from northstar.agent.submissions import SubmissionVerdict, submission_verdict
from northstar.agent.tabs import bind_session_tabs
from northstar.browser import BrowserHost, BrowserSession
from northstar.browser_settings import BrowserSettings
from northstar.composition import open_host
from northstar.errors import (
    CredentialsInvalid,
    ExpectationFailed,
    NorthstarError,
    OutcomeUnknown,
    TabClosed,
    UsageInvalid,
)
from northstar.journal import Journal
from northstar.journal.recorder import JournalRecorder
from northstar.monitor.behavior import BehaviorMonitor
from northstar.monitor.fingerprints import ActionRecord, describe_node, describe_recipe_target
from northstar.monitor.observation import Node
from northstar.monitor.screen_change import ScreenChangeSettings, screen_change
from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, RetryPolicy, Step, Target
from northstar.results import Evidence, IterationState, StepResult, StepStatus

__all__ = ["AgentHost", "open_agent_host"]

log = structlog.get_logger("northstar.agent")

_ITERATION = 1  # a session is one iteration of its run
_NOT_RESENT = "recorded result; not re-sent"


@dataclass(eq=False)
class _Session:
    """One open session: its run, browser context, monitor and what each tab showed."""

    session_id: str
    plan: Plan
    browser: BrowserSession
    stack: AsyncExitStack
    recorder: JournalRecorder
    views: dict[str, TabView]
    monitor: BehaviorMonitor = field(default_factory=BehaviorMonitor)
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # A submission's step and first answer, by its journal step id.
    answers: dict[str, tuple[BoundStep, ActAnswer]] = field(default_factory=dict)
    steps: int = 0

    def next_index(self) -> int:
        self.steps += 1
        return self.steps

    def view(self, tab: str) -> TabView:
        if tab not in self.views:
            roles = ", ".join(self.views)
            raise TabClosed(
                f"the session has no tab role {tab!r}", tab=tab, fix=f"Use one of: {roles}."
            )
        return self.views[tab]


def _session_plan(tabs: Mapping[str, BoundTab], timeout_ms: int) -> Plan:
    """The plan a session's context is guarded by: its tab roles, no steps of its own."""
    canonical = {role: [tab.start, list(tab.origins)] for role, tab in sorted(tabs.items())}
    digest = hashlib.sha256(json.dumps(canonical).encode()).hexdigest()
    return Plan(
        recipe_name="agent-session",
        recipe_version=1,
        definition_hash=digest,
        iteration=_ITERATION,
        tabs=dict(tabs),
        steps=(),
        outputs=(),
        done_when=(),
        default_timeout_ms=timeout_ms,
        params_fingerprint="",
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
    ) -> None:
        self._host = host
        self._journal = journal
        self.settings = settings or AgentSettings()
        self._project = project
        self._sessions: dict[str, _Session] = {}

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every open session (each context, and its run in the journal)."""
        while self._sessions:
            _, session = self._sessions.popitem()
            async with session.lock:
                await self._close(session)

    # Sessions

    async def open_session(self, tabs: Mapping[str, Any]) -> SessionOpened:
        """A new session with a context of its own, each tab role open at its start URL."""
        bound = bind_session_tabs(tabs)
        plan = _session_plan(bound, self.settings.open_timeout_ms)
        run_id, credential = self._journal.create_run(
            recipe_path="(agent session)",
            recipe_name=plan.recipe_name,
            definition_hash=plan.definition_hash,
            project=self._project,
            profile="",
            params_fingerprint="",
            total_iterations=1,
            options={"front_end": "agent", "origins": {r: t.origins for r, t in bound.items()}},
        )
        self._journal.start_iteration(run_id, _ITERATION, params_fingerprint="")
        session = await self._start(run_id, plan)
        self._sessions[run_id] = session
        self._journal.event(run_id, "agent_session_opened", tabs=sorted(bound))
        log.info("agent_session_opened", session=run_id, tabs=sorted(bound))
        opened = {role: tab.start or "" for role, tab in bound.items()}
        return SessionOpened(session_id=run_id, credential=credential, tabs=opened)

    async def _start(self, run_id: str, plan: Plan) -> _Session:
        stack = AsyncExitStack()
        try:
            browser = await stack.enter_async_context(self._host.session(plan))
            for tab in plan.tabs.values():
                await browser.open_tab(tab, timeout_ms=plan.default_timeout_ms)
        except BaseException as exc:
            await stack.aclose()
            code = exc.code if isinstance(exc, NorthstarError) else type(exc).__name__
            self._journal.mark_iteration(
                run_id, _ITERATION, IterationState.FAILED, reason_code=code
            )
            self._journal.finish_run(run_id, "failed")
            raise
        views = {role: TabView(role) for role in plan.tabs}
        return _Session(run_id, plan, browser, stack, self._journal.recorder(run_id), views)

    async def close_session(self, session_id: str, credential: str) -> SessionClosed:
        """Close the session's context; its run ends ``stopped`` (``blocked`` if unsettled)."""
        session = self._authorized(session_id, credential)
        async with session.lock:
            if self._sessions.pop(session_id, None) is None:
                raise _no_session(session_id)  # closed by a call that held the lock first
            status = await self._close(session)
        return SessionClosed(session_id=session_id, status=status)

    async def _close(self, session: _Session) -> str:
        await session.stack.aclose()
        run_id = session.session_id
        unsettled = self._journal.open_submissions(run_id, _ITERATION)
        state = IterationState.UNKNOWN if unsettled else IterationState.STOPPED
        reason = "a submission's outcome is unknown" if unsettled else "the agent closed it"
        self._journal.mark_iteration(
            run_id, _ITERATION, state, reason_code="AGENT_SESSION_CLOSED", reason=reason
        )
        status = "blocked" if unsettled else "stopped"
        self._journal.finish_run(run_id, status)
        self._journal.event(run_id, "agent_session_closed", status=status)
        log.info("agent_session_closed", session=run_id, status=status)
        return status

    def _authorized(self, session_id: str, credential: str) -> _Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise _no_session(session_id)
        self._journal.check_credential(session_id, credential)  # constant-time, hash only
        return session

    # Observing

    async def observe(
        self, session_id: str, credential: str, tab: str, *, full: bool = False
    ) -> ObserveAnswer:
        """The tab's page: whole the first time (or when asked), else what changed."""
        session = self._authorized(session_id, credential)
        async with session.lock:
            return await self._look(session, tab, full=full)

    async def _look(self, session: _Session, tab: str, *, full: bool) -> ObserveAnswer:
        view = session.view(tab)
        previous = view.latest
        observation = await session.browser.observe(tab)
        view.saw(observation)
        session.monitor.record_observation(observation)
        signal = session.monitor.current_signal
        if previous is None or shows_whole_page(previous, observation, full=full):
            text, whole = render_page(observation, max_lines=self.settings.max_page_lines), True
        else:
            limit = ScreenChangeSettings(max_items=self.settings.max_changes)
            change = screen_change(previous, observation, limit)
            text, whole = render_changes(change, observation), False
        return ObserveAnswer(
            tab=tab,
            url=observation.url,
            title=observation.title,
            full=whole,
            text=with_signal(text, signal),
            signal=signal,
        )

    # Acting

    async def act(
        self,
        session_id: str,
        credential: str,
        tab: str,
        action: str,
        *,
        ref: str | None = None,
        target: Target | Mapping[str, Any] | None = None,
        value: str | Sequence[str] | None = None,
        submit: bool = False,
        key: str | None = None,
        timeout_ms: int | None = None,
    ) -> ActAnswer:
        """Do one action on a tab, then observe it; see ``northstar.agent.actions``."""
        request = act_request(
            tab, action, ref=ref, target=target, value=value, submit=submit, key=key
        )
        session = self._authorized(session_id, credential)
        async with session.lock:
            return await self._act(session, request, self._timeout(timeout_ms, check=False))

    async def _act(self, session: _Session, request: ActRequest, timeout_ms: int) -> ActAnswer:
        view = session.view(request.tab)
        element = view.label(request.ref) if request.ref is not None else None
        step_id = f"act.{session.steps + 1:04d}"
        fingerprint = ""
        if request.submit:
            step_id = submission_step_id(session.secret, request)
            fingerprint = input_fingerprint(session.secret, request, element)
            recorded = self._recorded(session, request, step_id, fingerprint, timeout_ms)
            if recorded is not None:
                return recorded
        node = resolve(view, request.ref)[1] if request.ref is not None else None
        target = request.target if node is None else element_target(node.role, node.name)
        step = build_step(
            request, target, step_id=step_id, index=session.next_index(), timeout_ms=timeout_ms
        )
        step = _with_fingerprint(step, fingerprint)
        await self._dispatch(session, request, step, node)
        answer = await self._answer(session, request, step, node, dispatched=True)
        if request.submit:
            session.answers[step.id] = (step, answer)
        return answer

    def _recorded(
        self,
        session: _Session,
        request: ActRequest,
        step_id: str,
        fingerprint: str,
        timeout_ms: int,
    ) -> ActAnswer | None:
        """The answer of a submission already done under this key, or ``None`` to send it."""
        record = self._journal.submission(session.session_id, _ITERATION, step_id)
        verdict = submission_verdict(record, fingerprint)
        if verdict is SubmissionVerdict.SEND:
            return None
        earlier = session.answers.get(step_id)
        if earlier is None:  # done under this key, but not by a call of this process
            raise OutcomeUnknown(
                f"submission {step_id} was done earlier; its answer is no longer at hand",
                fix="Observe the tab to see its effect; use a new key to submit again.",
            )
        step, answer = earlier
        session.recorder.step_started(session.plan, step)
        shown = Evidence("submission", step.tab, f"{step.id} submitted once", True, _NOT_RESENT)
        self._finish(session, step, time.monotonic(), evidence=(shown,))
        log.info("agent_submission_not_resent", session=session.session_id, step=step_id)
        return answer.model_copy(update={"dispatched": False})

    async def _dispatch(
        self, session: _Session, request: ActRequest, step: BoundStep, node: Node | None
    ) -> None:
        """Perform the step, journaled as the runner journals it; the monitor sees it."""
        plan, recorder = session.plan, session.recorder
        sent = False

        def before_dispatch() -> None:
            nonlocal sent
            if step.is_submit and not recorder.submit_in_flight(plan, step):
                raise OutcomeUnknown(f"submission {step.id} changed state while it was sent")
            sent = True

        recorder.step_started(plan, step)
        started = time.monotonic()
        try:
            evidence = await self._perform(session, request, step, before_dispatch)
        except NorthstarError as exc:
            exc.with_context(step=step.id, tab=step.tab)
            self._finish(session, step, started, error=exc)
            session.monitor.record_action(self._action_record(session, request, node, sent))
            if sent:
                await self._look_again(session, step.tab)
            if sent and step.is_submit:
                raise _after_dispatch(exc, step) from exc
            raise
        if step.is_submit:
            recorder.submit_dispatched(plan, step)
        self._finish(session, step, started, evidence=evidence)
        session.monitor.record_action(self._action_record(session, request, node, True))

    async def _look_again(self, session: _Session, tab: str) -> None:
        """After an action failed once sent: a fresh look, so references match the page."""
        view = session.view(tab)
        view.current = False
        try:
            observation = await session.browser.observe(tab)
        except NorthstarError:
            return  # the tab is gone or unreadable: its references stay stale
        view.saw(observation)
        session.monitor.record_observation(observation)

    async def _perform(
        self, session: _Session, request: ActRequest, step: BoundStep, before: Any
    ) -> tuple[Evidence, ...]:
        if request.ref is None:
            return await session.browser.perform(step, before_dispatch=before)
        latest = session.view(step.tab).latest
        assert latest is not None  # resolve() refused a tab that was never observed
        reference = latest.reference(request.ref)
        return await session.browser.perform_on_reference(step, reference, before_dispatch=before)

    def _finish(
        self,
        session: _Session,
        step: BoundStep,
        started: float,
        *,
        evidence: tuple[Evidence, ...] = (),
        error: NorthstarError | None = None,
    ) -> None:
        status = StepStatus.FAILED if error is not None else StepStatus.PASSED
        elapsed = round((time.monotonic() - started) * 1000, 3)
        result = StepResult(
            step.id,
            step.tab,
            step.kind,
            status,
            elapsed,
            evidence,
            None if error is None else error.to_dict(),
        )
        session.recorder.step_finished(session.plan, result)

    def _action_record(
        self, session: _Session, request: ActRequest, node: Node | None, executed: bool
    ) -> ActionRecord:
        """The monitor's view: the element by role and name, typed text only as a digest."""
        view = session.view(request.tab)
        url = view.latest.url if view.latest is not None else ""
        described = describe_node(node) if node is not None else None
        if described is None and request.target is not None:
            described = describe_recipe_target(request.target)
        typed = request.value if isinstance(request.value, str) else None
        return ActionRecord.create(
            request.action,
            tab=request.tab,
            url=url,
            target=described,
            typed=typed,
            executed=executed,
        )

    async def _answer(
        self,
        session: _Session,
        request: ActRequest,
        step: BoundStep,
        node: Node | None,
        *,
        dispatched: bool,
    ) -> ActAnswer:
        page = await self._look(session, request.tab, full=False)
        return ActAnswer(
            tab=request.tab,
            action=request.action,
            did=_did(request, node),
            dispatched=dispatched,
            submission_key=step.id if step.is_submit else None,
            page=page,
            signal=page.signal,
        )

    # Checking

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
        session = self._authorized(session_id, credential)
        async with session.lock:
            return await self._check(session, tab, checked, self._timeout(timeout_ms, check=True))

    async def _check(
        self, session: _Session, tab: str, check: Check, timeout_ms: int
    ) -> CheckAnswer:
        session.view(tab)
        step = BoundStep(
            index=session.next_index(),
            step=Step(id=f"check.{session.steps:04d}", tab=tab, verify_outcome=check),
            timeout_ms=timeout_ms,
            retry=RetryPolicy(attempts=1),
        )
        session.recorder.step_started(session.plan, step)
        started = time.monotonic()
        try:
            evidence = await session.browser.check(
                check, tab=check.tab or tab, timeout_ms=timeout_ms
            )
        except ExpectationFailed as failed:
            self._finish(session, step, started, error=failed)
            held, found = False, failed.message
        else:
            self._finish(session, step, started, evidence=(evidence,))
            held, found = True, evidence.found
        # Passive: the monitor learns that the agent waited, not that it acted.
        session.monitor.record_action(ActionRecord.create("verify_outcome", tab=tab, executed=True))
        signal = session.monitor.current_signal
        return CheckAnswer(tab=tab, check=check.describe(), held=held, found=found, signal=signal)

    def _timeout(self, given: int | None, *, check: bool) -> int:
        default = self.settings.check_timeout_ms if check else self.settings.action_timeout_ms
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
) -> AsyncIterator[AgentHost]:
    """An ``AgentHost`` with its own journal and browser, all closed on every path."""
    with Journal.open(journal_path) as journal:
        async with (
            open_host(browser or BrowserSettings()) as host,
            AgentHost(host, journal, settings=settings) as agents,
        ):
            yield agents


def _no_session(session_id: str) -> CredentialsInvalid:
    return CredentialsInvalid(
        f"no open agent session {session_id!r} with that credential",
        fix="Open a session with open_session and present the id and credential it returned.",
    )


def _with_fingerprint(step: BoundStep, fingerprint: str) -> BoundStep:
    return replace(step, input_fingerprint=fingerprint)


def _after_dispatch(error: NorthstarError, step: BoundStep) -> OutcomeUnknown:
    """A submission that failed after it was sent: its outcome is unknown, as in a run."""
    return OutcomeUnknown(
        f"submission {step.id} was sent but did not complete ({error.code}: {error.message}); "
        "it will not be sent again under this key",
        step=step.id,
        tab=step.tab,
    )


def _did(request: ActRequest, node: Node | None) -> str:
    """What was done, in words; the typed value is never repeated."""
    if request.action == "goto":
        return f"goto on tab {request.tab!r}"
    if node is not None:
        what = f"{node.role} {json.dumps(node.name)}" if node.name else node.role
        what += f" (ref {request.ref})"
    elif request.target is not None:
        what = request.target.describe()
    else:
        what = "the page"
    key = f" {request.value}" if request.action == "press" else ""
    return f"{request.action}{key} {what} on tab {request.tab!r}"


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
