"""``SessionCore``: the shared core of a session that acts through the host.

An agent's session (``northstar.agent.host``) and a program's iteration
(``northstar.programs``) both hold one. It keeps the session's run, browser context,
monitor and what each tab showed, and does one call at a time (the caller holds ``lock``
and checks the credential first). Every action and check goes through the host's one
dispatch routine (``northstar.run.dispatch``): journaled started, for a submission in
flight (durably) right before it is sent and dispatched right after, its expectations,
then passed or failed; the monitor sees every action, observation and check. Whether a
submission may be sent at all is the journal's one rule
(``northstar.journal.submissions``), asked before anything on the page is looked up.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

import structlog

from northstar.agent.actions import (
    ActRequest,
    build_step,
    element_target,
    input_fingerprint,
    submission_step_id,
)
from northstar.agent.answers import ActAnswer, CheckAnswer, ObserveAnswer, with_signal
from northstar.agent.recipe_draft import ExecutedAction, HeldCheck, record_action, with_tabs
from northstar.agent.references import TabView, resolve, shows_whole_page
from northstar.agent.rendering import render_change_lines, render_changes, render_page
from northstar.agent.settings import AgentSettings
from northstar.browser import BrowserSession
from northstar.errors import ExpectationFailed, NorthstarError, OutcomeUnknown, TabClosed
from northstar.journal import Journal, SubmissionVerdict, submission_verdict
from northstar.monitor.behavior import BehaviorMonitor
from northstar.monitor.fingerprints import ActionRecord, describe_node, describe_recipe_target
from northstar.monitor.observation import Node, Observation
from northstar.monitor.screen_change import ScreenChangeSettings, screen_change
from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, RetryPolicy, Step
from northstar.results import Evidence
from northstar.run.dispatch import IterationRecorder, StepDispatch, acted_on, recorded_evidence
from northstar.run.failpoints import Failpoint, no_failpoint
from northstar.run.recorder import JournalRecorder

__all__ = ["ITERATION", "SessionCore"]

log = structlog.get_logger("northstar.agent")

ITERATION = 1  # an agent's session is one iteration of its run


class SessionCore:
    """One open session: its run, browser context, monitor and what each tab showed.

    ``recorder`` is where its steps are journaled (the journal's, unless the holder keeps
    a copy too); ``failpoint`` pauses a submission where the kill trials stop a worker.
    """

    def __init__(
        self,
        session_id: str,
        plan: Plan,
        browser: BrowserSession,
        journal: Journal,
        settings: AgentSettings,
        *,
        recorder: IterationRecorder | None = None,
        secret: bytes | None = None,
        failpoint: Failpoint = no_failpoint,
    ) -> None:
        self.session_id, self.plan, self.browser = session_id, plan, browser
        self.journal, self.settings = journal, settings
        self.recorder = recorder or JournalRecorder(journal, session_id)
        self.secret = secret or secrets.token_bytes(32)  # keys the input fingerprints
        self.failpoint = failpoint
        self.views = {role: TabView(role) for role in plan.tabs}
        self.monitor = BehaviorMonitor()
        self.lock = asyncio.Lock()
        # A submission's step and first answer, by its journal step id.
        self.answers: dict[str, tuple[BoundStep, ActAnswer]] = {}
        # Why a submission sent but not verified has no result, by its step id.
        self.unverified: dict[str, str] = {}
        # What succeeded, in order, for save_recipe; a sensitive field's value is never kept.
        self.history: list[ExecutedAction | HeldCheck] = []
        self.steps = 0
        # Tabs the session's actions opened (popups): each role's opener role.
        self.openers: dict[str, str] = {}

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

    # Observing

    async def look(self, tab: str, *, full: bool) -> ObserveAnswer:
        """Observe the tab: the whole page, or what changed since its previous look."""
        view = self.view(tab)
        previous = view.latest
        observation = await self.browser.observe(tab)
        view.saw(observation)
        self.monitor.record_observation(observation)
        signal = self.monitor.current_signal
        brief = None
        if previous is None or shows_whole_page(previous, observation, full=full):
            text, whole = render_page(observation, max_lines=self.settings.max_page_lines), True
        else:
            limit = ScreenChangeSettings(max_items=self.settings.max_changes)
            change = screen_change(previous, observation, limit)
            text, whole = render_changes(change, observation), False
            if (previous.url, previous.title) == (observation.url, observation.title):
                brief = "\n".join(render_change_lines(change, observation))
        return ObserveAnswer(
            tab=tab,
            url=observation.url,
            title=observation.title,
            full=whole,
            text=with_signal(text, signal),
            signal=signal,
            brief=brief,
        )

    async def _look_again(self, tab: str) -> None:
        """After an action failed once sent: a fresh look, so references match the page."""
        view = self.view(tab)
        view.current = False
        try:
            observation = await self.browser.observe(tab)
        except NorthstarError:
            return  # the tab is gone or unreadable: its references stay stale
        view.saw(observation)
        self.monitor.record_observation(observation)

    # Acting

    def submission_verdict(self, step_id: str, fingerprint: str) -> SubmissionVerdict:
        """The journal's one rule for this session's submission; a refusal raises."""
        record = self.journal.submission(self.session_id, self.plan.iteration, step_id)
        return submission_verdict(
            record,
            fingerprint,
            name=step_id,
            unknown_fix="Observe the tab to see whether it took effect; submit under a new key "
            "if not.",
            conflict_fix="Use a new key for a different submission.",
            run_id=self.session_id,
            step=step_id,
        )

    async def act(
        self, request: ActRequest, timeout_ms: int, *, expect: Sequence[Check] = ()
    ) -> ActAnswer:
        """Do the action (once, for a submission), then observe its tab.

        ``expect``: a submission's own expectations, checked as part of its step.
        """
        view = self.view(request.tab)
        element = view.label(request.ref) if request.ref is not None else None
        step_id = f"act.{self.steps + 1:04d}"
        fingerprint = ""
        if request.submit:
            step_id = submission_step_id(self.secret, request)
            fingerprint = input_fingerprint(self.secret, request, element)
            recorded = await self._recorded(step_id, fingerprint)
            if recorded is not None:
                return recorded
        node = resolve(view, request.ref)[1] if request.ref is not None else None
        target = request.target if node is None else element_target(node.role, node.name)
        step = build_step(
            request,
            target,
            step_id=step_id,
            index=self.next_index(),
            timeout_ms=timeout_ms,
            expect=expect if request.submit else (),
        )
        step = replace(step, input_fingerprint=fingerprint)
        before = view.latest
        opener_before = self._opener_view(request.tab)
        dispatch, evidence = await self._dispatch(request, step, node)
        opened = self._adopt_tabs(request.tab, step.id, evidence)
        roles = set(self.views)
        answer = await self._answer(request, step, node, dispatched=not dispatch.recorded)
        closed = [role for role in roles if role not in self.views]
        answer = answer.model_copy(update={"tabs_opened": opened, "tabs_closed": closed})
        if request.submit:
            self.answers[step.id] = (step, answer)
        after = view.latest if request.tab not in closed else None
        action = record_action(request, node, before, after, acted_on(evidence))
        self.history.append(
            with_tabs(action, opened, closed, opener_before, self._opener_latest(request.tab))
        )
        return answer

    # Tabs the actions open and close

    def _adopt_tabs(self, opener: str, step_id: str, evidence: Sequence[Evidence]) -> list[str]:
        """New views for the popups the action opened (the adapter bound and guarded them)."""
        opened = [e.tab for e in evidence if e.kind == "tab_opened" and e.tab not in self.views]
        origins = self.plan.tabs[opener].origins
        tabs = dict(self.plan.tabs)
        for role in opened:
            self.views[role] = TabView(role)
            self.openers[role] = opener
            tabs[role] = BoundTab(role, None, step_id, origins)
        self.plan = replace(self.plan, tabs=tabs)
        return opened

    def _forget_closed(self) -> list[str]:
        """Roles whose tab closed (a popup closing itself); later calls on them are
        ``TAB_CLOSED``, naming the roles still open."""
        closed = [role for role in self.views if not self.browser.has_tab(role)]
        for role in closed:
            del self.views[role]
        return closed

    async def _look_after(self, tab: str) -> ObserveAnswer:
        """The acted-on tab's change; once it closed itself (a popup's save, even while it
        was being read), its opener's."""
        self._forget_closed()
        if tab in self.views:
            try:
                return await self.look(tab, full=False)
            except TabClosed:
                self._forget_closed()
                if tab in self.views:
                    raise
        return await self.look(self.openers.get(tab) or next(iter(self.views)), full=False)

    def _opener_view(self, tab: str) -> Observation | None:
        opener = self.openers.get(tab)
        return self.views[opener].latest if opener in self.views else None

    def _opener_latest(self, tab: str) -> Observation | None:
        return self._opener_view(tab)

    def tab_list(self) -> list[tuple[str, str, str | None]]:
        """Each open role, the URL it showed last, and the role that opened it."""
        return [
            (role, view.latest.url if view.latest is not None else "", self.openers.get(role))
            for role, view in self.views.items()
        ]

    async def _recorded(self, step_id: str, fingerprint: str) -> ActAnswer | None:
        """The answer of a submission already done under this key, or ``None`` to send it."""
        if self.submission_verdict(step_id, fingerprint).sends:
            return None
        earlier = self.answers.get(step_id)
        if earlier is None:  # done under this key, but not by a call of this process
            raise OutcomeUnknown(
                f"submission {step_id} was done earlier; its answer is no longer at hand",
                fix="Observe the tab to see its effect; use a new key to submit again.",
            )
        step, answer = earlier
        dispatch = StepDispatch(self.recorder, self.plan, step)
        dispatch.start()
        await dispatch.passed((recorded_evidence(step),))
        log.info("agent_submission_not_resent", session=self.session_id, step=step_id)
        return answer.model_copy(update={"dispatched": False})

    async def _dispatch(
        self, request: ActRequest, step: BoundStep, node: Node | None
    ) -> tuple[StepDispatch, tuple[Evidence, ...]]:
        """The step through the host's dispatch routine; the monitor sees it."""
        feed = _ActionFeed(self, request, node)
        dispatch = StepDispatch(self.recorder, self.plan, step, failpoint=self.failpoint, feed=feed)
        dispatch.start()
        try:
            evidence = await dispatch.act(
                lambda before: self._perform(request, step, before),
                self._checker(step),
                lambda: self.browser.send_trace(step.tab),
            )
        except Exception as exc:
            failure = await dispatch.failed(exc)
            if dispatch.acted:
                await self._look_again(step.tab)
            if failure.unknown and dispatch.failed_check is not None:
                held = dispatch.failed_check.describe()
                self.unverified[step.id] = f"expectation did not hold: {held}"
            if failure.error is exc:
                raise
            raise failure.error from exc
        await dispatch.passed(evidence)
        return dispatch, evidence

    def _checker(self, step: BoundStep) -> Callable[[Check], Awaitable[Evidence]]:
        def check(expected: Check) -> Awaitable[Evidence]:
            tab = expected.tab or step.tab
            return self.browser.check(expected, tab=tab, timeout_ms=step.timeout_ms)

        return check

    async def _perform(
        self, request: ActRequest, step: BoundStep, before: Callable[[], None]
    ) -> tuple[Evidence, ...]:
        if request.ref is None:
            return await self.browser.perform(step, before_dispatch=before)
        latest = self.view(step.tab).latest
        assert latest is not None  # resolve() refused a tab that was never observed
        reference = latest.reference(request.ref)
        return await self.browser.perform_on_reference(step, reference, before_dispatch=before)

    def action_record(
        self, request: ActRequest, node: Node | None, *, executed: bool
    ) -> ActionRecord:
        """The monitor's view: the element by role and name, typed text only as a digest."""
        latest = self.view(request.tab).latest
        described = describe_node(node) if node is not None else None
        if described is None and request.target is not None:
            described = describe_recipe_target(request.target)
        return ActionRecord.create(
            request.action,
            tab=request.tab,
            url=latest.url if latest is not None else "",
            target=described,
            typed=request.value if isinstance(request.value, str) else None,
            executed=executed,
        )

    async def _answer(
        self, request: ActRequest, step: BoundStep, node: Node | None, *, dispatched: bool
    ) -> ActAnswer:
        page = await self._look_after(request.tab)
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

    async def check(self, tab: str, check: Check, timeout_ms: int) -> CheckAnswer:
        """Wait for a recipe check; passive, so the monitor does not count it as an action."""
        self.view(tab)
        index = self.next_index()
        step = BoundStep(
            index=index,
            step=Step(id=f"check.{index:04d}", tab=tab, verify_outcome=check),
            timeout_ms=timeout_ms,
            retry=RetryPolicy(attempts=1),
        )
        dispatch = StepDispatch(self.recorder, self.plan, step)
        dispatch.start()
        try:
            evidence = await self._checker(step)(check)
        except ExpectationFailed as failed:
            await dispatch.failed(failed)
            held, found = False, failed.message
        else:
            await dispatch.passed((evidence,))
            held, found = True, evidence.found
            self.history.append(HeldCheck(tab, check))
        self.monitor.record_action(ActionRecord.create("verify_outcome", tab=tab, executed=True))
        signal = self.monitor.current_signal
        # The check as the model wrote it may hold a password it typed: never repeat that.
        shown = self.browser.redacted(check.describe())
        return CheckAnswer(tab=tab, check=shown, held=held, found=found, signal=signal)


class _ActionFeed:
    """An action of the session, fed to its monitor as it was done (or tried)."""

    def __init__(self, session: SessionCore, request: ActRequest, node: Node | None) -> None:
        self._session, self._request, self._node = session, request, node

    async def acted(self, step: BoundStep, *, executed: bool, passed: bool) -> None:
        record = self._session.action_record(self._request, self._node, executed=executed)
        self._session.monitor.record_action(record)


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
    return f"{request.action}{key} {what}"  # the agent named the tab; the answer says if it changed
