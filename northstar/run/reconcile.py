"""Reconcile an unknown outcome with the recipe's read-only probe.

When a submission was dispatched (or may have been) and its effect could not be verified,
the run is blocked. Reconciling runs the submit step's ``reconcile`` probe (navigations
and checks only) in a fresh context and reads its verdict:

- every check held: the effect is there, the submission is ``verified``;
- the page loaded and a check definitively did not hold: the effect is not there *yet*.
  It is proven absent (and the step may be dispatched again under the same idempotency
  key) only when the probe ran at least the step's ``settle`` period after the
  submission was last sent: a server may still be saving it. Before that the outcome
  stays unknown and ``decide_submission`` says ``settling``;
- anything else (no probe, a page that did not load, an ambiguous target): inconclusive,
  and a person must decide (``needs_review``).

``iteration_verdict`` turns the submissions' outcomes, and where a resume could continue
(``northstar.run.continuation``), into the iteration's new state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from types import MappingProxyType
from urllib.parse import urljoin, urlsplit

from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import RetryPolicy, Step
from northstar.results import IterationResult, IterationState
from northstar.run.continuation import Continuation, Unresumable

__all__ = [
    "IterationVerdict",
    "ProbeVerdict",
    "SubmissionCheck",
    "SubmissionOutcome",
    "absence_provable_at",
    "decide_submission",
    "iteration_verdict",
    "probe_plan",
    "probe_verdict",
]

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


class SubmissionOutcome(StrEnum):
    """What reconciling decided for one submission."""

    FOUND = "found"
    ABSENT = "absent"  # not found by a probe run after the settle period: may be sent again
    SETTLING = "settling"  # not found yet, too early to prove it absent: still unknown
    INCONCLUSIVE = "inconclusive"


def absence_provable_at(sent: datetime, settle_s: int) -> datetime:
    """The first moment a probe that does not find the effect proves it absent."""
    return sent + timedelta(seconds=settle_s)


def decide_submission(
    verdict: ProbeVerdict, sent: datetime, settle_s: int, now: datetime
) -> SubmissionOutcome:
    """A probe's verdict, with "absent" held back until the settle period has passed."""
    if verdict is ProbeVerdict.ABSENT and now < absence_provable_at(sent, settle_s):
        return SubmissionOutcome.SETTLING
    return SubmissionOutcome(verdict.value)


@dataclass(frozen=True)
class SubmissionCheck:
    """One open submission as reconcile saw it."""

    step_id: str
    outcome: SubmissionOutcome
    sent: datetime
    settle_s: int

    @property
    def decidable_at(self) -> datetime:
        return absence_provable_at(self.sent, self.settle_s)


@dataclass(frozen=True)
class IterationVerdict:
    """An iteration's state after reconciling, with a reason code and a one-line reason."""

    state: IterationState
    code: str
    reason: str
    decidable_at: datetime | None = None  # when a settling outcome can be decided


def iteration_verdict(
    checks: Sequence[SubmissionCheck], resume: Continuation | Unresumable | None
) -> IterationVerdict:
    """The iteration's state from its open submissions and where a resume would continue.

    ``resume`` is ``resume_plan`` over the submissions verified now (including those the
    probes just found); ``None`` means none is verified.
    """
    outcomes = {check.outcome for check in checks}
    if SubmissionOutcome.INCONCLUSIVE in outcomes:
        return IterationVerdict(
            IterationState.NEEDS_REVIEW, "RECONCILED", "the reconcile probe was inconclusive"
        )
    settling = [c for c in checks if c.outcome is SubmissionOutcome.SETTLING]
    if settling:
        return _settling_verdict(settling)
    if SubmissionOutcome.ABSENT in outcomes:
        return IterationVerdict(
            IterationState.FAILED,
            "RECONCILED",
            "reconciled: the submission did not happen; resume sends it",
        )
    return _verified_submission_verdict(resume, found=bool(checks))


def _settling_verdict(settling: Sequence[SubmissionCheck]) -> IterationVerdict:
    latest = max(settling, key=lambda check: check.decidable_at)
    when = latest.decidable_at.isoformat(timespec="seconds")
    reason = (
        f"submission {latest.step_id!r} not found yet; its absence cannot be proven before "
        f"{when} (sent {latest.sent.isoformat(timespec='seconds')}, settle "
        f"{latest.settle_s} s): reconcile again then"
    )
    return IterationVerdict(IterationState.UNKNOWN, "OUTCOME_SETTLING", reason, latest.decidable_at)


def _verified_submission_verdict(
    resume: Continuation | Unresumable | None, *, found: bool
) -> IterationVerdict:
    """Every submission is verified (or none was sent): finished, resumable, or for review."""
    if resume is None:
        return IterationVerdict(
            IterationState.STOPPED,
            "RECONCILED",
            "interrupted before any submission was dispatched; resume runs it",
        )
    if isinstance(resume, Unresumable):
        return IterationVerdict(IterationState.NEEDS_REVIEW, "RESUME_POINT_UNKNOWN", resume.reason)
    if resume.finished:
        why = "the submission's effect was found" if found else "its submission was verified"
        return IterationVerdict(
            IterationState.VERIFIED, "RECONCILED", f"reconciled: {why} and nothing follows it"
        )
    where = f" at {resume.entry}" if resume.entry else ""
    return IterationVerdict(
        IterationState.STOPPED,
        "SUBMITTED_NOT_FINISHED",
        f"submission {resume.after!r} is verified but the steps after it did not finish: "
        f"resume continues after it{where}",
    )
