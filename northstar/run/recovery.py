"""After an unknown outcome: reconcile the run, or let a person decide, then resume.

An unknown outcome (a crash, a timeout after the submitting action, an inconclusive
check) blocks the run: ``remaining_iterations`` refuses to go on (``RUN_BLOCKED``) until
every unsettled iteration was reconciled. ``reconcile_run`` runs each open submission's
read-only probe; ``decide_iteration`` records a person's verdict instead. ``resume_run``
then runs the iterations that are not verified, over the run's lanes; submissions keep
their idempotency keys, so a verified or unknown submission is never sent again.

Every call presents the run's credential (``CREDENTIALS_INVALID`` otherwise).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import structlog

from northstar.browser import BrowserHost
from northstar.errors import (
    DefinitionChanged,
    ParamInvalid,
    ProfileMismatch,
    RunBlocked,
    UsageInvalid,
)
from northstar.journal import Journal, RunRecord, SubmissionState
from northstar.plan.compiler import bind
from northstar.plan.model import Plan
from northstar.readers import pid_alive
from northstar.results import IterationResult, IterationState
from northstar.run.execution import (
    RunOutcome,
    RunRequest,
    StopSignal,
    continue_run,
    rows_fingerprint,
)
from northstar.run.reconcile import ProbeVerdict, probe_plan, probe_verdict
from northstar.run.runner import ProgramRunner

__all__ = [
    "ReconcileDecision",
    "decide_iteration",
    "reconcile_run",
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
    verdicts: tuple[tuple[str, ProbeVerdict], ...]
    reason: str


def _refuse_if_live(record: RunRecord) -> None:
    """A run whose worker is still alive on this host is not ours to change."""
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
    return [
        number
        for number in range(1, record.total_iterations + 1)
        if number not in states or states[number][0] is not IterationState.VERIFIED
    ]


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
    _refuse_if_live(record)
    check_same_run(record, request)
    decisions: list[ReconcileDecision] = []
    for number, (state, fingerprint) in sorted(journal.iteration_states(run_id).items()):
        if state in _UNSETTLED or state is IterationState.NEEDS_REVIEW:
            plan = _plan_for(request, number, fingerprint, run_id)
            decisions.append(await _reconcile_iteration(plan, run_id, host, journal))
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


async def _reconcile_iteration(
    plan: Plan, run_id: str, host: BrowserHost, journal: Journal
) -> ReconcileDecision:
    number = plan.iteration
    verdicts: list[tuple[str, ProbeVerdict]] = []
    for submission in journal.open_submissions(run_id, number):
        verdict = await _probe(plan, submission.step_id, host)
        verdicts.append((submission.step_id, verdict))
        if verdict is ProbeVerdict.FOUND:
            journal.set_submission_state(
                run_id, number, submission.step_id, SubmissionState.VERIFIED
            )
        elif verdict is ProbeVerdict.ABSENT:
            journal.set_submission_state(run_id, number, submission.step_id, SubmissionState.FAILED)
    state, reason = _iteration_verdict([v for _, v in verdicts])
    journal.mark_iteration(run_id, number, state, reason_code="RECONCILED", reason=reason)
    journal.event(
        run_id,
        "reconciled",
        iteration=number,
        state=str(state),
        verdicts={step: str(v) for step, v in verdicts},
    )
    log.info("reconciled", run_id=run_id, iteration=number, state=str(state))
    return ReconcileDecision(number, state, tuple(verdicts), reason)


async def _probe(plan: Plan, step_id: str, host: BrowserHost) -> ProbeVerdict:
    probe = probe_plan(plan, plan.step(step_id))
    if probe is None:
        return ProbeVerdict.INCONCLUSIVE
    result: IterationResult = await ProgramRunner(host).run_iteration(probe)
    return probe_verdict(result)


def _iteration_verdict(verdicts: list[ProbeVerdict]) -> tuple[IterationState, str]:
    """All found: verified; any inconclusive: needs review; otherwise it may run again."""
    if not verdicts:
        return IterationState.STOPPED, "interrupted before any submission was dispatched"
    if ProbeVerdict.INCONCLUSIVE in verdicts:
        return IterationState.NEEDS_REVIEW, "the reconcile probe was inconclusive"
    if all(v is ProbeVerdict.FOUND for v in verdicts):
        return IterationState.VERIFIED, "reconciled: the submission's effect was found"
    return IterationState.FAILED, "reconciled: the submission did not happen; resume sends it"


def _status_after(journal: Journal, record: RunRecord) -> str:
    states = [state for state, _ in journal.iteration_states(record.run_id).values()]
    if IterationState.NEEDS_REVIEW in states:
        return "needs_review"
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
    _refuse_if_live(record)
    if number not in journal.iteration_states(run_id):
        raise UsageInvalid(
            f"run {run_id} has no iteration {number} to decide on",
            fix="Pick an iteration shown by `northstar show RUN_ID`.",
        )
    settled = SubmissionState.VERIFIED if mark == "verified" else SubmissionState.FAILED
    for submission in journal.open_submissions(run_id, number):
        journal.set_submission_state(run_id, number, submission.step_id, settled)
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
    _refuse_if_live(record)
    check_same_run(record, request)
    # Only what is not verified yet, dealt over the run's lanes (the request carries them).
    rest = remaining_iterations(record, journal.iteration_states(run_id), journal)
    if not rest:
        raise UsageInvalid(
            f"every iteration of run {run_id} is already verified",
            fix="Nothing to resume; start a new run for more iterations.",
        )
    journal.finish_run(run_id, "running")
    journal.event(run_id, "run_resumed", first=rest[0], remaining=len(rest))
    assert credential is not None  # checked above
    return await continue_run(
        request,
        run_id,
        credential,
        host=host,
        journal=journal,
        numbers=rest,
        stop=stop,
        on_result=on_result,
    )
