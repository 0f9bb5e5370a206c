"""Reconcile an unknown outcome with the recipe's read-only probe.

When a submission was dispatched (or may have been) and its effect could not be verified,
the run is blocked. Reconciling runs the submit step's ``reconcile`` probe (navigations
and checks only) in a read-only context started from the run's own signed-in state
(``northstar.run.identity``) and reads its verdict:

- every check held: the effect is there, the submission is ``verified``;
- the probe landed on the page it asked for (same path, its own ``page:`` checks held)
  and a check of the effect definitively did not hold: the effect is not there *yet*.
  It is proven absent (and the step may be dispatched again under the same idempotency
  key) only when the probe ran at least the step's ``settle`` period after the
  submission was last sent, and only when the probe has been seen to find a known effect
  of the same recipe (a positive control, ``northstar.run.probe_controls``). A probe
  never proven is ``blind``: the iteration needs review (``PROBE_BLIND``), never a resend;
- the navigation ended elsewhere (a redirect to a login page or another path, an HTTP
  error, a ``page:`` check that failed): ``INCONCLUSIVE``. The iteration stays unknown
  and the run blocked, with the reason; the next reconcile tries again;
- no probe at all: a person must decide (``needs_review``).

``iteration_verdict`` turns the submissions' outcomes, and where a resume could continue
(``northstar.run.continuation``), into the iteration's new state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum
from types import MappingProxyType
from urllib.parse import quote, unquote, urljoin, urlsplit

from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, ReconcileProbe, RetryPolicy, Step
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
    "landing_pattern",
    "probe_detail",
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
    """The submit step's probe as a plan on the same tab role, or ``None`` if it has none.

    Each ``goto`` is followed by a check that the tab landed on the path it asked for,
    and each ``page:`` is a wait: both fail as ``wait_for`` steps, which a probe's verdict
    reads as inconclusive. Only a failing ``check:`` (a ``verify_outcome``) means absent.
    """
    probes = step.step.reconcile
    tab = plan.tabs[step.tab]
    if not probes:
        return None
    bodies: list[Step] = []
    for i, probe in enumerate(probes, start=1):
        bodies.extend(_probe_steps(f"probe-{i}", step.tab, tab.start or "", probe))
    steps = tuple(
        BoundStep(index, body, step.timeout_ms, _PROBE_RETRY) for index, body in enumerate(bodies)
    )
    start = tab.start or next((s.step.goto for s in steps if s.step.goto), None)
    if start is None or not urlsplit(start).scheme:
        return None  # a popup role with no absolute URL to open: nothing to probe with
    probe_tab = BoundTab(step.tab, start, None, tab.origins)
    return replace(
        plan,
        tabs=MappingProxyType({step.tab: probe_tab}),
        steps=steps,
        outputs=(),
        done_when=(),
    )


def _probe_steps(step_id: str, role: str, start: str, probe: ReconcileProbe) -> list[Step]:
    if probe.goto is not None:
        url = urljoin(start, probe.goto)
        landed = Check(url_regex=landing_pattern(url))
        return [
            Step(id=step_id, tab=role, goto=url),
            Step(id=f"{step_id}.landed", tab=role, description=_LANDED, wait_for=landed),
        ]
    if probe.page is not None:
        return [Step(id=step_id, tab=role, description=_PAGE, wait_for=probe.page)]
    return [Step(id=step_id, tab=role, verify_outcome=probe.check)]


_LANDED = "the probe's navigation landed on the path it asked for"
_PAGE = "the probe is on the page it meant"


def landing_pattern(url: str) -> str:
    """A URL regex for "this origin and path" (any query; a trailing slash either way).

    The path is matched as the browser shows it: percent-encoded where it must be.
    """
    parts = urlsplit(url)
    path = quote(unquote(parts.path), safe="/:@!$&'()*+,;=-._~") or "/"
    base = f"{parts.scheme}://{parts.netloc}{path.rstrip('/')}"
    return f"^{re.escape(base)}/?(?:[?#]|$)"


def probe_verdict(result: IterationResult | None) -> ProbeVerdict:
    """Found if the probe verified; absent only if a check of the effect (not a page load,
    not the landing or ``page:`` check) said no."""
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


def probe_detail(plan: Plan, result: IterationResult) -> str:
    """What the probe looked for and what the page showed, in one line."""
    if result.verified:
        return "the probe found the effect"
    failing = next((s for s in result.steps if s.step_id == result.failing_step), None)
    where = next((e.found for s in reversed(result.steps) for e in s.evidence if e.found), "")
    asked = "; ".join(f"{s.kind} {_shown_check(s.step)}" for s in plan.steps)
    said = result.reason or result.reason_code or "no reason given"
    step = f"step {failing.step_id} ({failing.kind})" if failing else "the probe"
    return f"looked for [{asked}]; {step} failed: {said}" + (f"; page at {where}" if where else "")


def _shown_check(step: Step) -> str:
    check = step.verify_outcome or step.wait_for
    if check is not None:
        return json.dumps(check.model_dump(exclude_none=True, by_alias=True), sort_keys=True)
    return step.goto or step.kind


class SubmissionOutcome(StrEnum):
    """What reconciling decided for one submission."""

    FOUND = "found"
    ABSENT = "absent"  # not found by a proven probe after the settle period: may be resent
    SETTLING = "settling"  # not found yet, too early to prove it absent: still unknown
    BLIND = "blind"  # not found by a probe never seen to find a known effect: review
    INCONCLUSIVE = "inconclusive"  # the probe did not land on its page: try again later
    UNPROBED = "unprobed"  # the step has no probe: a person decides


def absence_provable_at(sent: datetime, settle_s: int) -> datetime:
    """The first moment a probe that does not find the effect proves it absent."""
    return sent + timedelta(seconds=settle_s)


def decide_submission(
    verdict: ProbeVerdict, sent: datetime, settle_s: int, now: datetime, *, proven: bool
) -> SubmissionOutcome:
    """A probe's verdict, with "absent" held back until the settle period has passed, and
    refused (``blind``) from a probe that never found a known effect (``proven``)."""
    if verdict is ProbeVerdict.ABSENT and now < absence_provable_at(sent, settle_s):
        return SubmissionOutcome.SETTLING
    if verdict is ProbeVerdict.ABSENT and not proven:
        return SubmissionOutcome.BLIND
    return SubmissionOutcome(verdict.value)


@dataclass(frozen=True)
class SubmissionCheck:
    """One open submission as reconcile saw it."""

    step_id: str
    outcome: SubmissionOutcome
    sent: datetime
    settle_s: int
    detail: str = ""  # what the probe looked for and what the page showed

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
    if SubmissionOutcome.UNPROBED in outcomes:
        return IterationVerdict(
            IterationState.NEEDS_REVIEW, "RECONCILED", "the reconcile probe was inconclusive"
        )
    blind = next((c for c in checks if c.outcome is SubmissionOutcome.BLIND), None)
    if blind is not None:
        return IterationVerdict(IterationState.NEEDS_REVIEW, "PROBE_BLIND", _blind(blind))
    elsewhere = next((c for c in checks if c.outcome is SubmissionOutcome.INCONCLUSIVE), None)
    if elsewhere is not None:
        return IterationVerdict(IterationState.UNKNOWN, "INCONCLUSIVE", _elsewhere(elsewhere))
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


def _blind(check: SubmissionCheck) -> str:
    return (
        f"submission {check.step_id!r} was not found by a probe never seen to find a known "
        f"effect, so its absence is not proven and nothing is sent: {check.detail}"
    )


def _elsewhere(check: SubmissionCheck) -> str:
    return (
        f"the probe of submission {check.step_id!r} did not see the page it asked for, so it "
        f"proves nothing; the run stays blocked, reconcile again: {check.detail}"
    )


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
