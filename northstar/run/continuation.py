"""Where a resume picks up an iteration whose submission was verified but which was not.

A submission is never sent twice, so an iteration that stopped after its submission was
verified (a later step failed, the worker died, reconcile found the effect) cannot be
run again from its first step: the skipped submission would leave its tab on the form,
and every later step would miss its target on every try. Instead, a resume runs the
steps after the last verified submission, from the state that submission led to:

- the submission's tab is reopened at its ``after_submit`` URL when the recipe declares
  one, else at the URL the tab showed when the submission's own expectations held;
- a tab the later steps use that was already in use before the submission is reopened
  only if its first later step is a ``goto`` (its earlier state cannot be rebuilt);
- when no ``after_submit`` is declared and everything after the submission only reads its
  answer page (passive checks on its tab, ``done_when`` there, no output read from it),
  nothing is reopened: that page was the answer to a POST and reloading its URL shows
  something else (the empty form). The submission is verified (by its own expectations
  or the probe that found its effect), so the iteration is finished from that evidence;
- if either cannot be known, the iteration is not resumable: a person reviews it.

``resume_plan`` decides this from plain data; it reads no journal and starts nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from urllib.parse import urlsplit

from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, RetryPolicy, Step
from northstar.redaction import REDACTED

__all__ = ["Continuation", "Unresumable", "resume_plan"]


@dataclass(frozen=True)
class Continuation:
    """The rest of an iteration after the verified submission ``after``."""

    plan: Plan
    after: str
    entry: str | None  # where the submission's tab reopens (None: no later step uses it)

    @property
    def finished(self) -> bool:
        """Nothing follows the submission: no step, no ``done_when``, no output."""
        return not (self.plan.steps or self.plan.done_when or self.plan.outputs)


@dataclass(frozen=True)
class Unresumable:
    """Why the steps after a verified submission cannot be continued automatically."""

    after: str
    reason: str


def resume_plan(
    plan: Plan, verified: Mapping[str, str | None]
) -> Continuation | Unresumable | None:
    """The plan's rest after its last verified submission; ``None`` to start from the top.

    ``verified`` maps each verified submission's step id to the URL its tab showed when
    its expectations held (``None`` if unknown, e.g. verified by a probe).
    """
    done = [step for step in plan.steps if step.is_submit and step.id in verified]
    if not done:
        return None
    last = max(done, key=lambda step: step.index)
    rest = tuple(step for step in plan.steps if step.index > last.index)
    if _only_reads_answer(plan, last, rest):
        done_when = tuple(check for check in plan.done_when if check.tab != last.tab)
        return Continuation(replace(plan, steps=(), done_when=done_when), last.id, None)
    used = _roles_used(plan, rest)
    lost = _lost_tab(plan, last, rest, used - {last.tab})
    if lost is not None:
        return Unresumable(last.id, lost)
    if last.tab not in used:
        return Continuation(replace(plan, steps=rest), last.id, None)
    entry = _entry(last, verified[last.id])
    if entry is None:
        return Unresumable(
            last.id,
            f"submission {last.id!r} is verified but the page it led to is not known, so "
            "the steps after it cannot be continued; declare `after_submit` on that step, "
            "or finish them by hand and mark the iteration verified",
        )
    tab = replace(plan.tabs[last.tab], start=entry)
    tabs = MappingProxyType({**plan.tabs, last.tab: tab})
    steps = (_reopen_step(plan, last, tab), *rest)
    return Continuation(replace(plan, tabs=tabs, steps=steps), last.id, entry)


def _only_reads_answer(plan: Plan, last: BoundStep, rest: tuple[BoundStep, ...]) -> bool:
    """Whether the rest only checks the submission's answer page, with no declared entry.

    Checks (not ``extract``: its value would be lost) on the submission's own tab, and
    ``done_when`` there too; no output at all (each is read from a page).
    """
    if last.step.after_submit or plan.outputs or not (rest or plan.done_when):
        return False
    steps_read = all(
        step.tab == last.tab and step.kind in _ANSWER_READS and _on_tab(step, last.tab)
        for step in rest
    )
    return steps_read and all(check.tab == last.tab for check in plan.done_when)


_ANSWER_READS = frozenset({"wait_for", "verify_outcome", "verify_field"})


def _on_tab(step: BoundStep, role: str) -> bool:
    return all(check.tab in (None, role) for check in _checks_of(step))


def _checks_of(step: BoundStep) -> Iterable[Check]:
    body = step.step
    yield from body.expect
    passive = body.wait_for or body.verify_outcome
    if passive is not None:
        yield passive


def _roles_used(plan: Plan, rest: tuple[BoundStep, ...]) -> set[str]:
    """Every tab role the rest of the iteration acts on, checks or reads."""
    used = {step.tab for step in rest}
    used |= {check.tab for step in rest for check in _checks_of(step) if check.tab}
    used |= {check.tab for check in plan.done_when if check.tab}
    return used | {output.tab for _, output in plan.outputs}


def _lost_tab(
    plan: Plan, last: BoundStep, rest: tuple[BoundStep, ...], roles: set[str]
) -> str | None:
    """Why a tab the rest needs cannot be brought back, or ``None`` if every one can."""
    earlier = [step for step in plan.steps if step.index <= last.index]
    for role in sorted(roles):
        if not any(s.tab == role or s.opens_tab == role for s in earlier):
            continue  # first opened after the submission: the rest opens it as usual
        first = next((s for s in rest if s.tab == role), None)
        if first is None or first.kind != "goto" or plan.tabs[role].start is None:
            return (
                f"tab {role!r} was in use before submission {last.id!r} and its state then "
                "cannot be rebuilt (its next step is not a goto); finish the iteration by "
                "hand and mark it verified"
            )
    return None


def _entry(step: BoundStep, recorded: str | None) -> str | None:
    """``after_submit`` wins; else the recorded URL, if absolute and not redacted."""
    for url in (step.step.after_submit, recorded):
        if url and urlsplit(url).scheme in ("http", "https") and REDACTED not in url:
            return url
    return None


def _reopen_step(plan: Plan, last: BoundStep, tab: BoundTab) -> BoundStep:
    """A passive first step: it opens the tab at the entry and shows where it landed."""
    ids = {step.id for step in plan.steps}
    step_id = f"{last.id}.reopen"
    while step_id in ids:
        step_id += "-again"
    origins = "|".join(re.escape(origin) for origin in tab.origins) or "https?://[^/]+"
    check = Check(url_regex=f"^(?:{origins})(?:[/?#]|$)")
    body = Step(
        id=step_id,
        tab=last.tab,
        description=f"reopen the tab where submission {last.id} led",
        wait_for=check,
    )
    return BoundStep(last.index, body, last.timeout_ms, RetryPolicy())
