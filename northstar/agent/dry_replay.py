"""A saved recipe proves itself: validated, linted, and replayed dry before it is offered.

``save_recipe`` writes the file, then ``prove_recipe`` loads it as ``northstar run`` would
(every static check), lints it, and replays it in a fresh browser context of its own (no
cookies of the session) with its defaults, up to its first submission: each action is
performed and its expectations checked (``propose_fix`` passes the run's parameters
again, as ``reconcile_run`` takes them); the submission's target is only resolved (it must
match exactly one element) and nothing is sent. A parameter with no default (a secret) is
filled with a stand-in, said so in the answer. The answer names each step's resolution, and
either "replays as saved" or the first step that does not.

Which steps run is a plain decision (``dry_steps``); ``prove_recipe`` is its driver.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from northstar.browser import BrowserHost, BrowserSession
from northstar.composition import load_compiled
from northstar.errors import NorthstarError
from northstar.lint.files import format_warning, lint_file
from northstar.plan.compiler import bind
from northstar.plan.model import BoundStep, Plan
from northstar.recipe.model import Check, CountCheck
from northstar.recipe.params import coerce_params
from northstar.results import Evidence

__all__ = ["DRY_VALUE", "DryReplay", "StepResolution", "dry_steps", "prove_recipe"]

DRY_VALUE = "dry-run"  # the stand-in for a parameter with no default (never sent)
_MAX_LINT_LINES = 5


class StepResolution(BaseModel):
    """One step of the dry replay: what its target resolved to, or why it did not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step: str
    outcome: str  # "acted", "resolved (not sent)", "skipped (passive)" or "failed"
    found: str = ""


class DryReplay(BaseModel):
    """The proof of a saved recipe: lint findings and the dry replay's steps."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    replays: bool
    steps: list[StepResolution]
    stopped_before: str | None = None  # the first submission, resolved and not sent
    stand_ins: list[str] = []  # parameters filled with a stand-in value
    submits_to: str | None = None  # where the first submission's element submits
    lint: list[str] = []

    @property
    def text(self) -> str:
        if self.replays:
            until = (
                f" up to {self.stopped_before!r} (resolved, not sent)"
                if self.stopped_before
                else ""
            )
            head = f"replays as saved{until}"
        else:
            failed = next(s for s in self.steps if s.outcome == "failed")
            head = f"does not replay as saved: step {failed.step!r}: {failed.found}"
        lines = [head, *(f"  {s.step}: {s.outcome} {s.found}".rstrip() for s in self.steps)]
        if self.stand_ins:
            lines.append(f"  stand-in values for: {', '.join(self.stand_ins)}")
        lines += [f"  lint: {line}" for line in self.lint]
        return "\n".join(lines)


@dataclass(frozen=True)
class _DrySteps:
    acted: tuple[BoundStep, ...]  # performed, with their expectations
    submission: BoundStep | None  # resolved only


def dry_steps(steps: Sequence[BoundStep]) -> _DrySteps:
    """The steps before the first submission, and that submission (``None`` if none)."""
    for index, step in enumerate(steps):
        if step.is_submit:
            return _DrySteps(tuple(steps[:index]), step)
    return _DrySteps(tuple(steps), None)


def _plan(path: Path, base_url: str, given: Mapping[str, Any] | None) -> tuple[Plan, list[str]]:
    compiled = load_compiled(path)
    recipe = compiled.recipe
    given = dict(given or {})
    missing = [
        n for n, p in recipe.params.items() if p.default is None and p.required and n not in given
    ]
    raw = {**dict.fromkeys(missing, DRY_VALUE), **given}
    values = coerce_params(recipe.params, raw, recipe_dir=path.parent)
    return bind(compiled, values, base_url=base_url, iteration=1), missing


def _lint(path: Path) -> list[str]:
    found = [format_warning(w) for w in lint_file(path)]
    return found[:_MAX_LINT_LINES]


async def prove_recipe(
    host: BrowserHost, path: Path, base_url: str, params: Mapping[str, Any] | None = None
) -> DryReplay:
    """Validate, lint and replay ``path`` dry (``params`` over its defaults); a
    ``RecipeInvalid`` on load is raised."""
    plan, stand_ins = _plan(path, base_url, params)
    lint = _lint(path)
    chosen = dry_steps(plan.steps)
    resolved: list[StepResolution] = []
    submits_to = None
    async with host.session(plan) as browser:
        replays = await _replay(browser, plan, chosen, resolved)
        if replays and chosen.submission is not None:
            submits_to = await _submits_to(browser, chosen.submission)
    stopped = chosen.submission.id if chosen.submission is not None and replays else None
    return DryReplay(
        replays=replays,
        steps=resolved,
        stopped_before=stopped,
        stand_ins=stand_ins,
        lint=lint,
        submits_to=submits_to,
    )


async def _submits_to(browser: BrowserSession, step: BoundStep) -> str | None:
    target = step.step.action_target
    if target is None:
        return None
    try:
        return await browser.submits_to(step.tab, target, timeout_ms=step.timeout_ms)
    except NorthstarError:
        return None


async def _replay(
    browser: BrowserSession, plan: Plan, chosen: _DrySteps, resolved: list[StepResolution]
) -> bool:
    """Each chosen step in turn, until one fails; ``resolved`` gets every step's line."""
    try:
        for tab in plan.tabs.values():
            if tab.start is not None:
                await browser.open_tab(tab, timeout_ms=plan.default_timeout_ms)
    except NorthstarError as exc:
        resolved.append(StepResolution(step="(open tabs)", outcome="failed", found=exc.message))
        return False
    for step in chosen.acted:
        if not await _dry_step(browser, step, resolved):
            return False
    if chosen.submission is not None:
        return await _resolve_only(browser, chosen.submission, resolved)
    return True


async def _dry_step(
    browser: BrowserSession, step: BoundStep, resolved: list[StepResolution]
) -> bool:
    if step.step.is_passive:
        resolved.append(StepResolution(step=step.id, outcome="skipped (passive)"))
        return True
    try:
        evidence = await browser.perform(step)
        for expected in step.step.expect:
            tab = expected.tab or step.tab
            await browser.check(expected, tab=tab, timeout_ms=step.timeout_ms)
    except NorthstarError as exc:
        resolved.append(StepResolution(step=step.id, outcome="failed", found=_failure(exc)))
        return False
    resolved.append(StepResolution(step=step.id, outcome="acted", found=_acted_on(evidence)))
    return True


async def _resolve_only(
    browser: BrowserSession, step: BoundStep, resolved: list[StepResolution]
) -> bool:
    """The submission's target must match exactly one element; nothing is clicked."""
    target = step.step.action_target
    if target is None:  # a submitting goto or bare press: nothing to resolve
        resolved.append(StepResolution(step=step.id, outcome="resolved (not sent)"))
        return True
    one = Check(count=CountCheck(target=target, equals=1))
    try:
        await browser.check(one, tab=step.tab, timeout_ms=step.timeout_ms)
    except NorthstarError as exc:
        resolved.append(StepResolution(step=step.id, outcome="failed", found=_failure(exc)))
        return False
    found = f"{target.describe()}: exactly one element"
    resolved.append(StepResolution(step=step.id, outcome="resolved (not sent)", found=found))
    return True


def _acted_on(evidence: Sequence[Evidence]) -> str:
    return next((e.found for e in evidence if e.kind == "acted_on"), "")


def _failure(exc: NorthstarError) -> str:
    return f"{exc.code}: {exc.message}"
