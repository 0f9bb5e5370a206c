"""One open agent session: the flow of its calls, in the order the journal must see them.

``AgentSession`` holds the session's browser context, run, monitor and what each tab
showed, and runs one call at a time (``AgentHost`` takes its lock and checks the
credential first). An action is journaled as the runner journals a step: started, for a
submission in flight (durably) right before it is sent and dispatched right after, then
passed or failed. The monitor sees every action, observation and check.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from typing import Any

import structlog

from northstar.agent.actions import (
    ActRequest,
    build_step,
    element_target,
    input_fingerprint,
    submission_step_id,
)
from northstar.agent.answers import ActAnswer, CheckAnswer, ObserveAnswer, with_signal
from northstar.agent.recipe_draft import ExecutedAction, HeldCheck, record_action
from northstar.agent.references import TabView, resolve, shows_whole_page
from northstar.agent.rendering import render_changes, render_page
from northstar.agent.settings import AgentSettings
from northstar.agent.submissions import SubmissionVerdict, submission_verdict
from northstar.browser import BrowserSession
from northstar.errors import ExpectationFailed, NorthstarError, OutcomeUnknown, TabClosed
from northstar.journal import Journal
from northstar.journal.recorder import JournalRecorder
from northstar.monitor.behavior import BehaviorMonitor
from northstar.monitor.fingerprints import ActionRecord, describe_node, describe_recipe_target
from northstar.monitor.observation import Node
from northstar.monitor.screen_change import ScreenChangeSettings, screen_change
from northstar.plan.model import BoundStep, Plan
from northstar.recipe.model import Check, RetryPolicy, Step
from northstar.results import Evidence, StepResult, StepStatus

__all__ = ["ITERATION", "AgentSession"]

log = structlog.get_logger("northstar.agent")

ITERATION = 1  # a session is one iteration of its run
_NOT_RESENT = "recorded result; not re-sent"


@dataclass(eq=False)
class AgentSession:
    """One open session: its run, browser context, monitor and what each tab showed."""

    session_id: str
    plan: Plan
    browser: BrowserSession
    stack: AsyncExitStack  # closes the browser context
    journal: Journal
    settings: AgentSettings
    views: dict[str, TabView]
    monitor: BehaviorMonitor = field(default_factory=BehaviorMonitor)
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # A submission's step and first answer, by its journal step id.
    answers: dict[str, tuple[BoundStep, ActAnswer]] = field(default_factory=dict)
    steps: int = 0
    # What succeeded, in order, for save_recipe; a sensitive field's value is never kept.
    history: list[ExecutedAction | HeldCheck] = field(default_factory=list)

    @property
    def recorder(self) -> JournalRecorder:
        return self.journal.recorder(self.session_id)

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

    async def act(self, request: ActRequest, timeout_ms: int) -> ActAnswer:
        """Do the action (once, for a submission), then observe its tab."""
        view = self.view(request.tab)
        element = view.label(request.ref) if request.ref is not None else None
        step_id = f"act.{self.steps + 1:04d}"
        fingerprint = ""
        if request.submit:
            step_id = submission_step_id(self.secret, request)
            fingerprint = input_fingerprint(self.secret, request, element)
            recorded = self._recorded(step_id, fingerprint)
            if recorded is not None:
                return recorded
        node = resolve(view, request.ref)[1] if request.ref is not None else None
        target = request.target if node is None else element_target(node.role, node.name)
        step = build_step(
            request, target, step_id=step_id, index=self.next_index(), timeout_ms=timeout_ms
        )
        step = replace(step, input_fingerprint=fingerprint)
        before = view.latest
        evidence = await self._dispatch(request, step, node)
        answer = await self._answer(request, step, node)
        if request.submit:
            self.answers[step.id] = (step, answer)
        acted_on = next((e.found for e in evidence if e.kind == "acted_on"), "")
        self.history.append(record_action(request, node, before, view.latest, acted_on))
        return answer

    def _recorded(self, step_id: str, fingerprint: str) -> ActAnswer | None:
        """The answer of a submission already done under this key, or ``None`` to send it."""
        record = self.journal.submission(self.session_id, self.plan.iteration, step_id)
        if submission_verdict(record, fingerprint) is SubmissionVerdict.SEND:
            return None
        earlier = self.answers.get(step_id)
        if earlier is None:  # done under this key, but not by a call of this process
            raise OutcomeUnknown(
                f"submission {step_id} was done earlier; its answer is no longer at hand",
                fix="Observe the tab to see its effect; use a new key to submit again.",
            )
        step, answer = earlier
        self.recorder.step_started(self.plan, step)
        shown = Evidence("submission", step.tab, f"{step.id} submitted once", True, _NOT_RESENT)
        self._finish(step, time.monotonic(), evidence=(shown,))
        log.info("agent_submission_not_resent", session=self.session_id, step=step_id)
        return answer.model_copy(update={"dispatched": False})

    async def _dispatch(
        self, request: ActRequest, step: BoundStep, node: Node | None
    ) -> tuple[Evidence, ...]:
        """Perform the step, journaled as the runner journals it; the monitor sees it."""
        recorder = self.recorder
        sent = False

        def before_dispatch() -> None:
            nonlocal sent
            if step.is_submit and not recorder.submit_in_flight(self.plan, step):
                raise OutcomeUnknown(f"submission {step.id} changed state while it was sent")
            sent = True

        recorder.step_started(self.plan, step)
        started = time.monotonic()
        try:
            evidence = await self._perform(request, step, before_dispatch)
        except NorthstarError as exc:
            exc.with_context(step=step.id, tab=step.tab)
            self._finish(step, started, error=exc)
            self.monitor.record_action(self._action_record(request, node, executed=sent))
            if sent:
                await self._look_again(step.tab)
            if sent and step.is_submit:
                raise _after_dispatch(exc, step) from exc
            raise
        if step.is_submit:
            recorder.submit_dispatched(self.plan, step)
        self._finish(step, started, evidence=evidence)
        self.monitor.record_action(self._action_record(request, node, executed=True))
        return evidence

    async def _perform(
        self, request: ActRequest, step: BoundStep, before: Any
    ) -> tuple[Evidence, ...]:
        if request.ref is None:
            return await self.browser.perform(step, before_dispatch=before)
        latest = self.view(step.tab).latest
        assert latest is not None  # resolve() refused a tab that was never observed
        reference = latest.reference(request.ref)
        return await self.browser.perform_on_reference(step, reference, before_dispatch=before)

    def _finish(
        self,
        step: BoundStep,
        started: float,
        *,
        evidence: tuple[Evidence, ...] = (),
        error: NorthstarError | None = None,
    ) -> None:
        status = StepStatus.FAILED if error is not None else StepStatus.PASSED
        elapsed = round((time.monotonic() - started) * 1000, 3)
        failure = None if error is None else error.to_dict()
        result = StepResult(step.id, step.tab, step.kind, status, elapsed, evidence, failure)
        self.recorder.step_finished(self.plan, result)

    def _action_record(
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

    async def _answer(self, request: ActRequest, step: BoundStep, node: Node | None) -> ActAnswer:
        page = await self.look(request.tab, full=False)
        return ActAnswer(
            tab=request.tab,
            action=request.action,
            did=_did(request, node),
            dispatched=True,
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
        self.recorder.step_started(self.plan, step)
        started = time.monotonic()
        try:
            evidence = await self.browser.check(check, tab=check.tab or tab, timeout_ms=timeout_ms)
        except ExpectationFailed as failed:
            self._finish(step, started, error=failed)
            held, found = False, failed.message
        else:
            self._finish(step, started, evidence=(evidence,))
            held, found = True, evidence.found
            self.history.append(HeldCheck(tab, check))
        self.monitor.record_action(ActionRecord.create("verify_outcome", tab=tab, executed=True))
        signal = self.monitor.current_signal
        return CheckAnswer(tab=tab, check=check.describe(), held=held, found=found, signal=signal)


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
