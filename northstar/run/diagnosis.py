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
_FORM_READ_MS = 2_000  # one attribute read of an element already on the page
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


def candidates(
    target: Target | None,
    observation: Observation,
    *,
    submitted_to: str | None = None,
    forms: Mapping[tuple[str, str], str | None] | None = None,
    landmark: str | None = None,
    ordinal: int | None = None,
) -> list[dict[str, Any]]:
    """Elements that may be what ``target`` meant, each by role, name and closeness, at
    most ``MAX_CANDIDATES``, ranked by role, then the form they submit (``forms``: where
    each candidate submits, against ``submitted_to``, where the step's element submitted
    when it last passed), then the landmark they are in (the step's element's when it last
    passed), then how far it is from the element's place among those of its role then
    (``ordinal``), and only then by name similarity. A candidate
    that submits to another form than the step's is flagged ``submits_elsewhere`` and is
    never first: clicking it would send something else."""
    if target is None:
        return []
    found = _alike_nodes(target, observation)
    same_role = [c for c in found.values() if c["same_role"]]
    for position, candidate in enumerate(found.values()):
        place = same_role.index(candidate) if candidate in same_role else position
        candidate["position"] = 0 if ordinal is None else abs(place - ordinal)
        where = (forms or {}).get((candidate["role"], candidate["name"]))
        if submitted_to is not None and where is not None:
            candidate["same_form"] = where == submitted_to
            candidate["submits_elsewhere"] = where != submitted_to
        if landmark is not None:
            candidate["same_landmark"] = candidate.pop("_landmark") == landmark
        candidate.pop("_landmark", None)
    ranked = sorted(found.values(), key=_rank)
    for candidate in ranked:
        del candidate["position"]
    return ranked[:MAX_CANDIDATES]


def _rank(candidate: Mapping[str, Any]) -> tuple[Any, ...]:
    """Role, never a form elsewhere first, the same form, landmark, position, name."""
    return (
        not candidate["same_role"],
        candidate.get("submits_elsewhere", False),
        not candidate.get("same_form", False),
        not candidate.get("same_landmark", False),
        candidate["position"] if candidate["same_role"] else 0,
        -candidate["closeness"],
    )


def landmark_of(path: Sequence[str]) -> str:
    """The outermost label of a node's path (its landmark or region), ``""`` at the top."""
    return path[0] if len(path) > 1 else ""


def _alike_nodes(target: Target, observation: Observation) -> dict[tuple[str, str], dict[str, Any]]:
    """The same role, or a close name, in page order."""
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
                "_landmark": landmark_of(node.path),
            }
    return found


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
    *,
    submitted_to: str | None = None,
    forms: Mapping[tuple[str, str], str | None] | None = None,
) -> dict[str, Any]:
    """The diagnosis as plain data (``where``: step, tab, code, message)."""
    diagnosis: dict[str, Any] = {**where, "target": target.describe() if target else None}
    if observation is None:
        note = "the tab could not be observed at the failure (closed, or gone with the browser)"
        return diagnosis | {"candidates": [], "observation": None, "changes": None, "note": note}
    page = compact_observation(observation)
    ranked = candidates(
        target,
        page,
        submitted_to=submitted_to,
        forms=forms,
        landmark=_landmark_in(baseline, target),
        ordinal=_ordinal_in(baseline, target),
    )
    diagnosis |= {"candidates": ranked, "observation": render_page(page)}
    if submitted_to is not None:
        diagnosis["submitted_to"] = submitted_to
    if baseline is None or baseline.tab != page.tab:
        note = "no baseline: this step has not passed in a run of this recipe file"
        return diagnosis | {"changes": None, "note": note}
    change = screen_change(baseline, page)
    return diagnosis | {"changes": render_changes(change, page, since="the step last passed")}


def _landmark_in(baseline: Observation | None, target: Target | None) -> str | None:
    """The landmark of the target's element when the step last passed, if it was seen."""
    if baseline is None or target is None or target.role is None or target.name is None:
        return None
    node = next(
        (n for n in baseline.nodes if n.role == target.role and n.name == target.name), None
    )
    return None if node is None else landmark_of(node.path)


def _ordinal_in(baseline: Observation | None, target: Target | None) -> int | None:
    """The element's place among the named elements of its role when the step last passed."""
    if baseline is None or target is None or target.role is None or target.name is None:
        return None
    named = list(dict.fromkeys(n.name for n in baseline.nodes if n.role == target.role and n.name))
    return named.index(target.name) if target.name in named else None


# The driver.

SUBMITTED_TO = "submitted_to"  # kept beside a submission's baseline: where it submitted


class StepDiagnosis:
    """Takes the baselines around passing steps and the diagnosis at a failure."""

    def __init__(self, recorder: DiagnosisRecorder) -> None:
        self._recorder = recorder
        self._pending: dict[str, Observation] = {}  # taken before the action, kept if it passes
        self._forms: dict[str, str | None] = {}  # where a submission's element submits

    async def before_step(self, session: BrowserSession, plan: Plan, step: BoundStep) -> None:
        if not self._recorder.baseline_wanted(plan, step):
            return
        observed = await _observe(session, step.tab)
        if observed is not None:
            self._pending[step.id] = compact_observation(observed)
            target = step.step.action_target
            if step.is_submit and target is not None:
                self._forms[step.id] = await _submits_to(session, step.tab, target)

    def step_passed(self, plan: Plan, step: BoundStep) -> None:
        observation = self._pending.pop(step.id, None)
        submitted_to = self._forms.pop(step.id, None)
        if observation is not None:
            dumped = observation.model_dump(mode="json", exclude_defaults=True)
            if submitted_to is not None:
                dumped[SUBMITTED_TO] = submitted_to
            self._recorder.record_baseline(plan, step, dumped)

    async def at_failure(
        self, session: BrowserSession, plan: Plan, step_id: str, error: NorthstarError
    ) -> None:
        """Record the diagnosis of a failure whose code is one of ``DIAGNOSED_CODES``."""
        self._pending.clear()
        self._forms.clear()
        if error.code not in DIAGNOSED_CODES:
            return
        action, checks, tab = _what_ran(plan, step_id, error)
        target = diagnosed_target(action, checks, error.message)
        observed = await _observe(session, tab) if tab else None
        stored = dict(self._recorder.last_baseline(plan, step_id) or {})
        submitted_to = stored.pop(SUBMITTED_TO, None)
        baseline = Observation.model_validate(stored) if stored else None
        forms = await _candidate_forms(session, tab, target, observed) if submitted_to else {}
        where: dict[str, Any] = {"step": step_id, "iteration": plan.iteration, "tab": tab}
        where |= {"code": error.code, "message": error.message}
        diagnosis = build_diagnosis(
            where, target, observed, baseline, submitted_to=submitted_to, forms=forms
        )
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


async def _submits_to(session: BrowserSession, tab: str, target: Target) -> str | None:
    """Where the target submits, or ``None``: a help, so a failure to read it is no error."""
    try:
        return await session.submits_to(tab, target, timeout_ms=_FORM_READ_MS)
    except NorthstarError:
        return None


async def _candidate_forms(
    session: BrowserSession,
    tab: str,
    target: Target | None,
    observed: Observation | None,
) -> dict[tuple[str, str], str | None]:
    """Where each same-role candidate submits (read once each, bounded in number)."""
    if observed is None or target is None or target.role is None:
        return {}
    found = candidates(target, compact_observation(observed))
    same_role = [(c["role"], c["name"]) for c in found if c["same_role"]]
    return {
        (role, name): await _submits_to(session, tab, Target(role=role, name=name, exact=True))
        for role, name in same_role
    }


async def _observe(session: BrowserSession, tab: str) -> Observation | None:
    if not session.has_tab(tab):
        return None
    try:
        return await session.observe(tab)
    except NorthstarError:
        return None  # a diagnosis must never hide or replace the failure it explains
