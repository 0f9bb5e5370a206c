"""Feeding a run's own actions and observations to a BehaviorMonitor (opt-in).

The stored path does not need the monitor: a recipe's repetition is asked for. A person
debugging a recipe, or the agent path, can attach one; its signals are collected on the
iteration's result as advice and never change a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from northstar.browser import BrowserSession, Reading
from northstar.monitor.behavior import BehaviorMonitor
from northstar.monitor.fingerprints import ActionRecord, describe_recipe_target
from northstar.plan.model import BoundStep
from northstar.recipe.model import Step, Target

__all__ = ["StepFeed", "StepMonitor", "action_record"]


def _target_of(step: Step) -> Target | None:
    body = getattr(step, step.kind)
    target = getattr(body, "target", None)
    return target if isinstance(target, Target) else None


def _typed_of(step: Step) -> str | None:
    """What the step types or sends: digested by the record, never kept as text."""
    if step.fill is not None:
        return step.fill.value
    if step.press is not None:
        return step.press.key
    return step.goto


def action_record(step: BoundStep, *, url: str, executed: bool) -> ActionRecord:
    """The monitor's view of one recipe step."""
    target = _target_of(step.step)
    return ActionRecord.create(
        step.kind,
        tab=step.tab,
        url=url,
        target=describe_recipe_target(target) if target is not None else None,
        typed=_typed_of(step.step),
        executed=executed,
    )


class StepMonitor:
    """Records each step, and optionally an observation of its tab, into a monitor."""

    def __init__(self, monitor: BehaviorMonitor, *, observe: bool = False) -> None:
        self.monitor = monitor
        self.observe = observe
        self.signals: list[Mapping[str, Any]] = []
        self._seen_tabs: set[str] = set()

    async def before_action(self, session: BrowserSession, step: BoundStep) -> None:
        """Observe a tab once before the first action on it: the state a loop starts from."""
        if self.observe and not step.is_passive and step.tab not in self._seen_tabs:
            self._seen_tabs.add(step.tab)
            self._keep(self.monitor.record_observation(await session.observe(step.tab)))

    async def after_step(self, session: BrowserSession, step: BoundStep, *, executed: bool) -> None:
        if not session.has_tab(step.tab):
            return
        url = await session.read(Reading("url", step.tab), timeout_ms=step.timeout_ms)
        self._keep(self.monitor.record_action(action_record(step, url=url, executed=executed)))
        if self.observe and executed and not step.is_passive:
            self._keep(self.monitor.record_observation(await session.observe(step.tab)))

    def feed(self, session: BrowserSession) -> StepFeed:
        """This monitor as the dispatch's feed for one session's steps."""
        return StepFeed(self, session)

    def _keep(self, signal: Any) -> None:
        if signal is not None:
            self.signals.append(signal.model_dump(mode="json"))

    def take(self) -> tuple[Mapping[str, Any], ...]:
        """The signals raised since the last call (one iteration's worth)."""
        signals, self.signals = tuple(self.signals), []
        self._seen_tabs.clear()  # the next iteration starts in a fresh context
        return signals


class StepFeed:
    """A recipe's steps fed to a ``StepMonitor``: each step that passed, as it was done."""

    def __init__(self, monitor: StepMonitor, session: BrowserSession) -> None:
        self._monitor, self._session = monitor, session

    async def acted(self, step: BoundStep, *, executed: bool, passed: bool) -> None:
        if passed:  # a failed step ends its iteration: there is no loop to advise on
            await self._monitor.after_step(self._session, step, executed=executed)
