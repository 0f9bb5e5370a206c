"""When a stored recipe breaks: the diagnosis an agent reads to repair it.

A step that fails with ``TARGET_MISSING``, ``TARGET_AMBIGUOUS`` or ``EXPECTATION_FAILED``
gets a diagnosis in the journal: the step, what it looked for, the candidates on the page
(elements of the same role, and elements whose name is close), the tab as the agent
sessions render it (``northstar.monitor.rendering``), and what changed on that tab since
the step last passed.

"Last passed" needs a baseline, and observing a tab costs a few milliseconds, so the
stored path takes at most one per recipe step per run: the first time a step passes in a
run, the observation taken just before its action is kept. A later failure of that step,
in this run or another run of the same recipe file, is compared with the newest one. Every
other observation is taken only on failure. Observing is a help, never a verdict: if it
fails, the run's result is the same and the diagnosis says what is missing.

``candidates``, ``diagnosed_target`` and ``build_diagnosis`` are pure; ``StepDiagnosis``
is the thin driver the runner calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any, Protocol, runtime_checkable

from northstar.browser import BrowserSession
from northstar.errors import NorthstarError
from northstar.monitor.observation import Observation
from northstar.monitor.rendering import render_changes, render_page
from northstar.monitor.screen_change import screen_change
from northstar.plan.model import BoundStep, Plan
from northstar.recipe.model import Check, Step, Target

__all__ = [
    "DIAGNOSED_CODES",
    "DiagnosisRecorder",
    "StepDiagnosis",
    "build_diagnosis",
    "candidates",
    "compact_observation",
    "diagnosed_target",
]

DIAGNOSED_CODES = frozenset({"TARGET_MISSING", "TARGET_AMBIGUOUS", "EXPECTATION_FAILED"})
MAX_CANDIDATES = 8
CLOSE_NAME = 0.6  # similarity (0..1) from which a name of another role counts as close
PAGE_LINES = 150  # the failing tab's text is for reading, not the whole of a long page


@runtime_checkable
class DiagnosisRecorder(Protocol):
    """Where baselines and diagnoses go; the journal's recorder implements it."""

    def baseline_wanted(self, plan: Plan, step: BoundStep) -> bool: ...

    def record_baseline(
        self, plan: Plan, step: BoundStep, observation: Mapping[str, Any]
    ) -> None: ...

    def last_baseline(self, plan: Plan, step_id: str) -> dict[str, Any] | None: ...

    def record_diagnosis(self, plan: Plan, diagnosis: Mapping[str, Any]) -> None: ...


# Decisions.


def _check_target(check: Check) -> Target | None:
    body = getattr(check, check.kind)
    if isinstance(body, Target):
        return body
    target = getattr(body, "target", None)
    return target if isinstance(target, Target) else None


def _step_checks(step: Step) -> tuple[Check, ...]:
    passive = (step.wait_for, step.verify_outcome)
    return (*(c for c in passive if c is not None), *step.expect)


def diagnosed_target(action: Target | None, checks: Sequence[Check], message: str) -> Target | None:
    """What the failure was about: the check the message names, else the action's target,
    else the first check that has a target."""
    for check in checks:
        if check.describe() in message and _check_target(check) is not None:
            return _check_target(check)
    if action is not None:
        return action
    return next((t for t in map(_check_target, checks) if t is not None), None)


def _closeness(wanted: str, name: str) -> float:
    """0..1; a name that contains the wanted text (or the reverse) counts as close."""
    a, b = wanted.casefold().strip(), name.casefold().strip()
    if not a or not b:
        return 0.0
    ratio = SequenceMatcher(None, a, b).ratio()
    return max(ratio, 0.8) if a in b or b in a else ratio


def candidates(target: Target | None, observation: Observation) -> list[dict[str, Any]]:
    """Elements that may be what ``target`` meant: the same role first, then close names;
    each by role, name and closeness, most similar first, at most ``MAX_CANDIDATES``."""
    if target is None:
        return []
    wanted = target.matched_text or ""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for node in observation.nodes:
        if node.structural or not node.name or (node.role, node.name) in found:
            continue
        same_role = target.role is not None and node.role == target.role
        close = round(_closeness(wanted, node.name), 2)
        if same_role or close >= CLOSE_NAME:
            found[(node.role, node.name)] = {
                "role": node.role,
                "name": node.name,
                "same_role": same_role,
                "closeness": close,
            }
    ranked = sorted(found.values(), key=lambda c: (-c["same_role"], -c["closeness"]))
    return ranked[:MAX_CANDIDATES]


def compact_observation(observation: Observation) -> Observation:
    """The observation without element references (stale once the page moved on) and
    without the visible text and tables a screen change does not compare."""
    nodes = tuple(dataclasses.replace(node, ref=None) for node in observation.nodes)
    return observation.model_copy(update={"nodes": nodes, "text": "", "tables": ()})


def build_diagnosis(
    where: Mapping[str, Any],
    target: Target | None,
    observation: Observation | None,
    baseline: Observation | None,
) -> dict[str, Any]:
    """The diagnosis as plain data (``where``: step, tab, code, message)."""
    diagnosis: dict[str, Any] = {**where, "target": target.describe() if target else None}
    if observation is None:
        note = "the tab could not be observed at the failure (closed, or gone with the browser)"
        return diagnosis | {"candidates": [], "observation": None, "changes": None, "note": note}
    page = compact_observation(observation)
    diagnosis |= {"candidates": candidates(target, page), "observation": render_page(page)}
    if baseline is None or baseline.tab != page.tab:
        note = "no baseline: this step has not passed in a run of this recipe file"
        return diagnosis | {"changes": None, "note": note}
    change = screen_change(baseline, page)
    return diagnosis | {"changes": render_changes(change, page, since="the step last passed")}


# The driver.


class StepDiagnosis:
    """Takes the baselines around passing steps and the diagnosis at a failure."""

    def __init__(self, recorder: DiagnosisRecorder) -> None:
        self._recorder = recorder
        self._pending: dict[str, Observation] = {}  # taken before the action, kept if it passes

    async def before_step(self, session: BrowserSession, plan: Plan, step: BoundStep) -> None:
        if not self._recorder.baseline_wanted(plan, step):
            return
        observed = await _observe(session, step.tab)
        if observed is not None:
            self._pending[step.id] = compact_observation(observed)

    def step_passed(self, plan: Plan, step: BoundStep) -> None:
        observation = self._pending.pop(step.id, None)
        if observation is not None:
            dumped = observation.model_dump(mode="json", exclude_defaults=True)
            self._recorder.record_baseline(plan, step, dumped)

    async def at_failure(
        self, session: BrowserSession, plan: Plan, step_id: str, error: NorthstarError
    ) -> None:
        """Record the diagnosis of a failure whose code is one of ``DIAGNOSED_CODES``."""
        self._pending.clear()
        if error.code not in DIAGNOSED_CODES:
            return
        action, checks, tab = _what_ran(plan, step_id, error)
        target = diagnosed_target(action, checks, error.message)
        observed = await _observe(session, tab) if tab else None
        stored = self._recorder.last_baseline(plan, step_id)
        baseline = Observation.model_validate(stored) if stored else None
        where: dict[str, Any] = {"step": step_id, "iteration": plan.iteration, "tab": tab}
        where |= {"code": error.code, "message": error.message}
        diagnosis = build_diagnosis(where, target, observed, baseline)
        self._recorder.record_diagnosis(plan, diagnosis)


def _what_ran(
    plan: Plan, step_id: str, error: NorthstarError
) -> tuple[Target | None, tuple[Check, ...], str]:
    """The failing step's action target, its checks and its tab (``done_when`` too)."""
    step = next((s for s in plan.steps if s.id == step_id), None)
    if step is not None:
        return step.step.action_target, _step_checks(step.step), step.tab
    checks = tuple(plan.done_when) if step_id == "done_when" else ()
    tab = str(error.context.get("tab") or _first_tab(checks))
    return None, checks, tab


def _first_tab(checks: Iterable[Check]) -> str:
    return next((c.tab for c in checks if c.tab), "")


async def _observe(session: BrowserSession, tab: str) -> Observation | None:
    if not session.has_tab(tab):
        return None
    try:
        return await session.observe(tab)
    except NorthstarError:
        return None  # a diagnosis must never hide or replace the failure it explains
