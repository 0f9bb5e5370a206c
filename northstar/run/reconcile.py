"""Reconcile an unknown outcome with the recipe's read-only probe.

When a submission was dispatched (or may have been) and its effect could not be verified,
the run is blocked. Reconciling runs the submit step's ``reconcile`` probe (navigations
and checks only) in a fresh context and reads its verdict:

- every check held: the effect is there, the submission is ``verified``;
- the page loaded and a check definitively did not hold: the effect is proven absent,
  and the step may be dispatched again under the same idempotency key;
- anything else (no probe, a page that did not load, an ambiguous target): inconclusive,
  and a person must decide (``needs_review``).
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from types import MappingProxyType
from urllib.parse import urljoin, urlsplit

from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import RetryPolicy, Step
from northstar.results import IterationResult

__all__ = ["ProbeVerdict", "probe_plan", "probe_verdict"]

# A probe that cannot see its effect must say so, not wait through navigation retries.
_PROBE_RETRY = RetryPolicy(attempts=2, max_seconds=30)
_ABSENT_CODES = frozenset({"EXPECTATION_FAILED", "TARGET_MISSING"})


class ProbeVerdict(StrEnum):
    FOUND = "found"
    ABSENT = "absent"
    INCONCLUSIVE = "inconclusive"


def probe_plan(plan: Plan, step: BoundStep) -> Plan | None:
    """The submit step's probe as a plan on the same tab role, or ``None`` if it has none."""
    probes = step.step.reconcile
    tab = plan.tabs[step.tab]
    if not probes:
        return None
    steps: list[BoundStep] = []
    for i, probe in enumerate(probes, start=1):
        if probe.goto is not None:
            body = Step(id=f"probe-{i}", tab=step.tab, goto=urljoin(tab.start or "", probe.goto))
        else:
            body = Step(id=f"probe-{i}", tab=step.tab, verify_outcome=probe.check)
        steps.append(BoundStep(len(steps), body, step.timeout_ms, _PROBE_RETRY))
    start = tab.start or next((s.step.goto for s in steps if s.step.goto), None)
    if start is None or not urlsplit(start).scheme:
        return None  # a popup role with no absolute URL to open: nothing to probe with
    probe_tab = BoundTab(step.tab, start, None, tab.origins)
    return replace(
        plan,
        tabs=MappingProxyType({step.tab: probe_tab}),
        steps=tuple(steps),
        outputs=(),
        done_when=(),
    )


def probe_verdict(result: IterationResult | None) -> ProbeVerdict:
    """Found if the probe verified; absent only if a check (not a page load) said no."""
    if result is None:
        return ProbeVerdict.INCONCLUSIVE
    if result.verified:
        return ProbeVerdict.FOUND
    failing = next((s for s in result.steps if s.step_id == result.failing_step), None)
    if (
        failing is not None
        and failing.kind == "verify_outcome"
        and (result.reason_code in _ABSENT_CODES)
    ):
        return ProbeVerdict.ABSENT
    return ProbeVerdict.INCONCLUSIVE
