"""After an unknown outcome: reconcile the run, or let a person decide, then resume.

An unknown outcome (a crash, a timeout after the submitting action, an inconclusive
check) blocks the run: ``remaining_iterations`` refuses to go on (``RUN_BLOCKED``) until
every unsettled iteration was reconciled. ``reconcile_run`` runs each open submission's
read-only probe; a probe that does not find the effect proves it absent only once the
step's settle period has passed since it was sent (before that the iteration stays
unknown, ``OUTCOME_SETTLING``, with the time it can be decided). ``decide_iteration``
records a person's verdict instead. ``resume_run`` then runs the iterations that are not
verified, over the run's lanes; submissions keep their idempotency keys, so a verified
or unknown submission is never sent again. Before it sends a submission proven absent
again, resume probes once more; an iteration whose submission is verified continues
after it (``northstar.run.continuation``).

Every call presents the run's credential (``CREDENTIALS_INVALID`` otherwise).
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

import structlog

from northstar.browser import BrowserHost
from northstar.errors import (
    DefinitionChanged,
    OutcomeSettling,
    ParamInvalid,
    ProfileMismatch,
    RunBlocked,
    UsageInvalid,
)
from northstar.journal import Journal, RunRecord, SubmissionRecord, SubmissionState
from northstar.journal.paths import run_artifacts_dir
from northstar.journal.store import SKIPPED
from northstar.journal.workers import pid_alive
from northstar.plan.compiler import bind
from northstar.plan.model import Plan
from northstar.results import IterationResult, IterationState, queued_run_busy
from northstar.run.continuation import resume_plan
from northstar.run.execution import (
    RunOutcome,
    RunRequest,
    StopSignal,
    continue_run,
    rows_fingerprint,
)
from northstar.run.identity import RunIdentity, run_identity
from northstar.run.probe_controls import is_proven, read_probe, run_control
from northstar.run.reconcile import (
    IterationVerdict,
    ProbeVerdict,
    SubmissionCheck,
    SubmissionOutcome,
    absence_provable_at,
    decide_submission,
    iteration_verdict,
    probe_plan,
)
from northstar.run.signin import held_identity, state_file

__all__ = [
    "ReconcileDecision",
    "decide_iteration",
    "reconcile_run",
    "record_outcome",
    "refuse_if_live",
    "remaining_iterations",
    "resume_run",
]

log = structlog.get_logger("northstar.run.recovery")

_UNSETTLED = frozenset({IterationState.UNKNOWN, IterationState.RUNNING})


@dataclass(frozen=True)
class ReconcileDecision:
    """What reconciling found for one iteration."""

    iteration: int
    state: IterationState
    verdicts: tuple[tuple[str, SubmissionOutcome], ...]
    reason: str
    code: str = "RECONCILED"
    decidable_at: datetime | None = None  # set while an outcome is settling


def refuse_if_live(record: RunRecord, journal: Journal | None = None) -> None:
    """A run still in a worker's hands is not ours to change.

    A run served by a queue (``journal`` given, and it names the queue) is judged by the
    journal alone (``queued_run_busy``); any other by its worker's pid on this host.
    """
    queue = journal.serving_queue(record.run_id) if journal is not None else None
    if journal is not None and queue is not None:
        states = [state for state, _ in journal.iteration_states(record.run_id).values()]
        if queued_run_busy(record.status, record.total_iterations, states):
            raise RunBlocked(
                f"run {record.run_id} is still being worked on by the workers of queue "
                f"{queue!r}: the journal does not record all its iterations settled",
                run_id=record.run_id,
                fix=f"Wait for `northstar watch {record.run_id}` to end; if every worker "
                f"died, start one on {queue!r}: it takes their iterations over.",
            )
        return
    live = (
        record.status == "running"
        and record.worker_pid is not None
        and record.worker_host == socket.gethostname()
        and pid_alive(record.worker_pid)
    )
    if live:
        raise RunBlocked(
            f"run {record.run_id} is still running in process {record.worker_pid}",
            run_id=record.run_id,
            fix="Wait for it to end (`northstar watch RUN_ID`) or stop it first.",
        )


def check_same_run(record: RunRecord, request: RunRequest) -> None:
    """The request must be the run's: same definition, profile and parameters."""
    if record.definition_hash != request.compiled.recipe_hash:
        raise DefinitionChanged(
            f"the recipe {record.recipe_path} changed since run {record.run_id} started",
            run_id=record.run_id,
        )
    if record.profile != (request.profile or ""):
        raise ProfileMismatch(
            f"run {record.run_id} was started with another browser profile",
            run_id=record.run_id,
        )
    if record.params_fingerprint != rows_fingerprint(request):
        raise ParamInvalid(
            f"the parameters differ from those run {record.run_id} was started with",
            run_id=record.run_id,
            fix="Pass the same -p values and params file as when the run started.",
        )
    if record.total_iterations != request.repeat.count:
        raise UsageInvalid(
            f"run {record.run_id} asked for {record.total_iterations} iterations",
            fix="Resume with the same --repeat or rows file as the run.",
        )


def remaining_iterations(
    record: RunRecord, states: dict[int, tuple[IterationState, str]], journal: Journal
) -> list[int]:
    """The iterations still to run (none if all are verified); blocked if any is unsettled."""
    for number, (state, _) in sorted(states.items()):
        open_keys = journal.open_submissions(record.run_id, number)
        if state in _UNSETTLED or state is IterationState.NEEDS_REVIEW or open_keys:
            raise RunBlocked(
                f"iteration {number} of run {record.run_id} is {state}: its outcome must be "
                "settled before the run may go on",
                run_id=record.run_id,
                iteration=number,
            )
    skipped = journal.skipped_iterations(record.run_id)
    return [
        number
        for number in range(1, record.total_iterations + 1)
        if number not in skipped
        and (number not in states or states[number][0] is not IterationState.VERIFIED)
    ]


def skip_iteration(
    run_id: str, credential: str | None, number: int, why: str, *, journal: Journal
) -> None:
    """A person's decision to leave a failed row out of the run, with the reason journaled.

    Only a ``failed`` iteration may be skipped: nothing of it can be on the site (a failed
    submission was never sent, or a person decided it did not happen). A verified one is
    done, and an unknown one may have happened: reconcile it instead.
    """
    journal.check_credential(run_id, credential)
    refuse_if_live(journal.run_record(run_id), journal)
    if not why.strip():
        raise UsageInvalid("--skip needs --why TEXT: the reason is journaled with the row")
    state = journal.iteration_states(run_id).get(number, (None, ""))[0]
    if state is not IterationState.FAILED:
        raise UsageInvalid(
            f"iteration {number} of run {run_id} is {state or 'not started'}: only a failed "
            "row can be skipped",
            fix="Skip a row shown as failed by `northstar show RUN_ID`; reconcile an unknown one.",
        )
    journal.mark_iteration(
        run_id, number, IterationState.FAILED, reason_code=SKIPPED, reason=f"skipped: {why}"
    )
    journal.event(run_id, "row_skipped", iteration=number, why=why)


async def reconcile_run(
    run_id: str,
    credential: str | None,
    request: RunRequest,
    *,
    host: BrowserHost,
    journal: Journal,
) -> list[ReconcileDecision]:
    """Probe every unsettled iteration's open submissions and record what was found."""
    journal.check_credential(run_id, credential)
    record = journal.run_record(run_id)
    refuse_if_live(record, journal)
    check_same_run(record, request)
    decisions: list[ReconcileDecision] = []
    async with _probing(request, record, host, journal) as probing:
        for number, (state, fingerprint) in sorted(journal.iteration_states(run_id).items()):
            if state in _UNSETTLED or state is IterationState.NEEDS_REVIEW:
                plan = _plan_for(request, number, fingerprint, run_id)
                decisions.append(await _reconcile_iteration(plan, probing))
    journal.finish_run(run_id, _status_after(journal, record))
    return decisions


def _plan_for(request: RunRequest, number: int, fingerprint: str, run_id: str) -> Plan:
    plan = bind(
        request.compiled, request.row_for(number), base_url=request.base_url, iteration=number
    )
    if plan.params_fingerprint != fingerprint:
        raise ParamInvalid(
            f"iteration {number}'s parameters differ from those it ran with",
            run_id=run_id,
            iteration=number,
            fix="Pass the same -p values and params file as when the run started.",
        )
    return plan


@dataclass(frozen=True)
class _Probing:
    """What a probe of this run needs: a browser, the run's identity, the journal."""

    request: RunRequest
    run_id: str
    host: BrowserHost
    identity: RunIdentity
    journal: Journal


@asynccontextmanager
async def _probing(
    request: RunRequest, record: RunRecord, host: BrowserHost, journal: Journal
) -> AsyncIterator[_Probing]:
    """The run's own identity for its probes: its recorded profile or saved state, signed in
    again by the recipe's ``setup`` when it has one (the run's held state was removed)."""
    held_at = state_file(run_artifacts_dir(journal.path, record.run_id), lane=0)
    start = run_identity(request.profile, request.state, recorded_profile=record.profile)
    values = request.row_for(1)
    async with held_identity(
        host, request.compiled, values, request.base_url, held_at, start
    ) as identity:
        yield _Probing(request, record.run_id, host, identity, journal)


async def _reconcile_iteration(plan: Plan, probing: _Probing) -> ReconcileDecision:
    journal, run_id = probing.journal, probing.run_id
    number = plan.iteration
    checks: list[SubmissionCheck] = []
    for submission in journal.open_submissions(run_id, number):
        check = await _check_submission(plan, submission, probing)
        checks.append(check)
        record_outcome(journal, run_id, number, check)
    verdict = iteration_verdict(checks, resume_plan(plan, _verified(journal, run_id, number)))
    journal.mark_iteration(
        run_id, number, verdict.state, reason_code=verdict.code, reason=verdict.reason
    )
    journal.event(
        run_id,
        "reconciled",
        iteration=number,
        state=str(verdict.state),
        code=verdict.code,
        verdicts={check.step_id: str(check.outcome) for check in checks},
    )
    log.info("reconciled", run_id=run_id, iteration=number, state=str(verdict.state))
    return _decision(number, checks, verdict)


def _decision(
    number: int, checks: list[SubmissionCheck], verdict: IterationVerdict
) -> ReconcileDecision:
    verdicts = tuple((check.step_id, check.outcome) for check in checks)
    return ReconcileDecision(
        number, verdict.state, verdicts, verdict.reason, verdict.code, verdict.decidable_at
    )


async def _check_submission(
    plan: Plan, submission: SubmissionRecord, probing: _Probing
) -> SubmissionCheck:
    """Probe one submission; "absent" only once its settle period has passed and only
    from a probe proven by a positive control."""
    step = plan.step(submission.step_id)
    settle_s = step.step.settle_s
    sent = submission.sent
    if probe_plan(plan, step) is None:
        return SubmissionCheck(step.id, SubmissionOutcome.UNPROBED, sent, settle_s)
    reading = await read_probe(plan, step.id, probing.host, probing.identity)
    proven = reading.verdict is not ProbeVerdict.ABSENT or await _proven(plan, step.id, probing)
    now = probing.journal.now()
    outcome = decide_submission(reading.verdict, sent, settle_s, now, proven=proven)
    return SubmissionCheck(step.id, outcome, sent, settle_s, reading.detail)


async def _proven(plan: Plan, step_id: str, probing: _Probing) -> bool:
    """Whether the step's probe is proven; if not, a control on a verified submission of
    the same step in this run, when there is one, may prove it now."""
    base_url = probing.request.base_url
    definition_hash = probing.request.compiled.recipe_hash
    if is_proven(probing.journal, definition_hash, base_url, step_id):
        return True
    known = _known_effect(probing, step_id)
    if known is None:
        return False
    return await run_control(
        known,
        step_id,
        run_id=probing.run_id,
        definition_hash=definition_hash,
        base_url=base_url,
        host=probing.host,
        identity=probing.identity,
        journal=probing.journal,
    )


def _known_effect(probing: _Probing, step_id: str) -> Plan | None:
    """The plan of an iteration of this run whose ``step_id`` submission was verified by
    its own expectations: an effect the probe must find."""
    journal, run_id = probing.journal, probing.run_id
    for number, (_, fingerprint) in sorted(journal.iteration_states(run_id).items()):
        for submission in journal.iteration_submissions(run_id, number):
            verified = submission.state is SubmissionState.VERIFIED
            if submission.step_id == step_id and verified and submission.decided_by is None:
                return _plan_for(probing.request, number, fingerprint, run_id)
    return None


def record_outcome(journal: Journal, run_id: str, number: int, check: SubmissionCheck) -> None:
    """Found: verified; proven absent: failed (may be sent again); otherwise left open."""
    settled = {
        SubmissionOutcome.FOUND: SubmissionState.VERIFIED,
        SubmissionOutcome.ABSENT: SubmissionState.FAILED,
    }.get(check.outcome)
    if settled is not None:
        journal.set_submission_state(run_id, number, check.step_id, settled, decided_by="probe")


def _verified(journal: Journal, run_id: str, number: int) -> dict[str, str | None]:
    """The iteration's verified submissions, with the URL each left its tab at."""
    return {
        s.step_id: s.result_url
        for s in journal.iteration_submissions(run_id, number)
        if s.state is SubmissionState.VERIFIED
    }


def _status_after(journal: Journal, record: RunRecord) -> str:
    states = [state for state, _ in journal.iteration_states(record.run_id).values()]
    if IterationState.NEEDS_REVIEW in states:
        return "needs_review"
    if any(state in _UNSETTLED for state in states):
        return "blocked"
    verified = sum(state is IterationState.VERIFIED for state in states)
    return "verified" if verified == record.total_iterations else "stopped"


def decide_iteration(
    run_id: str,
    credential: str | None,
    number: int,
    mark: Literal["verified", "failed"],
    *,
    journal: Journal,
) -> None:
    """A person's verdict on an iteration; ``failed`` means its submissions did not happen."""
    journal.check_credential(run_id, credential)
    record = journal.run_record(run_id)
    refuse_if_live(record, journal)
    if number not in journal.iteration_states(run_id):
        raise UsageInvalid(
            f"run {run_id} has no iteration {number} to decide on",
            fix="Pick an iteration shown by `northstar show RUN_ID`.",
        )
    settled = SubmissionState.VERIFIED if mark == "verified" else SubmissionState.FAILED
    for submission in journal.open_submissions(run_id, number):
        journal.set_submission_state(
            run_id, number, submission.step_id, settled, decided_by="person"
        )
    journal.mark_iteration(
        run_id,
        number,
        IterationState(mark),
        reason_code="PERSON_DECIDED",
        reason=f"marked {mark} by a person",
    )
    journal.event(run_id, "person_decided", iteration=number, mark=mark)
    journal.finish_run(run_id, _status_after(journal, record))


async def resume_run(
    run_id: str,
    credential: str | None,
    request: RunRequest,
    *,
    host: BrowserHost,
    journal: Journal,
    stop: StopSignal | None = None,
    on_result: Callable[[IterationResult], None] = lambda result: None,
) -> RunOutcome:
    """Continue the run's remaining iterations once every outcome is settled."""
    journal.check_credential(run_id, credential)
    record = journal.run_record(run_id)
    refuse_if_live(record, journal)
    check_same_run(record, request)
    # Only what is not verified (nor skipped) yet, dealt over the run's lanes.
    states = journal.iteration_states(run_id)
    _refuse_while_settling(request, record, states, journal)
    rest = remaining_iterations(record, states, journal)
    if not rest and journal.skipped_iterations(run_id):
        journal.finish_run(run_id, "failed")
        raise UsageInvalid(
            f"nothing left to run in {run_id}: every other iteration is verified and the "
            "skipped rows stay out (journaled with their reason)",
            fix="See `northstar show RUN_ID`; start a new run for a skipped row once it is fixed.",
        )
    if not rest:
        raise UsageInvalid(
            f"every iteration of run {run_id} is already verified",
            fix="Nothing to resume; start a new run for more iterations.",
        )
    await _recheck_absences(rest, request, record, host, journal)
    journal.finish_run(run_id, "running")
    journal.event(run_id, "run_resumed", first=rest[0], remaining=len(rest))
    assert credential is not None  # checked above
    outcome = await continue_run(
        request,
        run_id,
        credential,
        host=host,
        journal=journal,
        numbers=rest,
        stop=stop,
        on_result=on_result,
    )
    return _with_skipped(outcome, journal)


def _with_skipped(outcome: RunOutcome, journal: Journal) -> RunOutcome:
    """A run whose rest verified but that has skipped rows is not verified: it failed, and
    its ending names the skipped row."""
    if outcome.status != "verified" or not journal.skipped_iterations(outcome.run_id):
        return outcome
    journal.finish_run(outcome.run_id, "failed")
    return replace(outcome, status="failed")


def _settling(
    request: RunRequest, journal: Journal, run_id: str, number: int
) -> Iterator[tuple[str, datetime]]:
    """An unknown iteration's open submissions whose absence cannot be proven yet."""
    settle = {step.id: step.settle_s for step in request.compiled.recipe.steps}
    now = journal.now()
    for submission in journal.open_submissions(run_id, number):
        at = absence_provable_at(submission.sent, settle.get(submission.step_id, 0))
        if now < at:
            yield submission.step_id, at


def _refuse_while_settling(
    request: RunRequest,
    record: RunRecord,
    states: dict[int, tuple[IterationState, str]],
    journal: Journal,
) -> None:
    """An outcome still inside its settle period blocks the run, saying until when."""
    for number, (state, _) in sorted(states.items()):
        if state is not IterationState.UNKNOWN:
            continue
        for step_id, at in _settling(request, journal, record.run_id, number):
            raise OutcomeSettling(
                f"iteration {number} of run {record.run_id}: submission {step_id!r} was not "
                f"found yet and its absence cannot be proven before "
                f"{at.isoformat(timespec='seconds')}",
                run_id=record.run_id,
                iteration=number,
                step=step_id,
            )


async def _recheck_absences(
    numbers: list[int],
    request: RunRequest,
    record: RunRecord,
    host: BrowserHost,
    journal: Journal,
) -> None:
    """Probe again, right before resending, each submission a probe proved absent.

    The effect may have appeared since reconcile looked: then it is verified now and the
    iteration continues after it. A person's ``--mark failed`` is not second-guessed.
    """
    run_id = record.run_id
    absent = [
        (number, submission)
        for number in numbers
        for submission in journal.iteration_submissions(run_id, number)
        if submission.state is SubmissionState.FAILED and submission.decided_by == "probe"
    ]
    if not absent:
        return  # nothing to probe: no sign-in either
    async with _probing(request, record, host, journal) as probing:
        for number, submission in absent:
            fingerprint = journal.iteration_states(run_id)[number][1]
            plan = _plan_for(request, number, fingerprint, run_id)
            check = await _check_submission(plan, submission, probing)
            _after_recheck(journal, run_id, number, check)


def _after_recheck(journal: Journal, run_id: str, number: int, check: SubmissionCheck) -> None:
    outcome = str(check.outcome)
    journal.event(
        run_id, "absence_rechecked", iteration=number, step=check.step_id, outcome=outcome
    )
    if check.outcome is SubmissionOutcome.ABSENT:
        return
    if check.outcome is SubmissionOutcome.FOUND:
        record_outcome(journal, run_id, number, check)
        return
    if check.outcome is SubmissionOutcome.SETTLING:
        raise OutcomeSettling(
            f"iteration {number} of run {run_id}: submission {check.step_id!r} cannot be "
            f"proven absent before {check.decidable_at.isoformat(timespec='seconds')}",
            run_id=run_id,
            iteration=number,
            step=check.step_id,
        )
    reason = (
        f"re-checking that submission {check.step_id!r} is absent before sending it again "
        "was inconclusive"
    )
    journal.mark_iteration(
        run_id, number, IterationState.NEEDS_REVIEW, reason_code="RECONCILED", reason=reason
    )
    journal.finish_run(run_id, "needs_review")
    raise RunBlocked(
        f"iteration {number} of run {run_id} needs review: {reason}",
        run_id=run_id,
        iteration=number,
        fix="Check the site, then `northstar reconcile RUN_ID` again or decide with --mark.",
    )
