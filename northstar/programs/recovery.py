"""Reconcile and resume a program run: the recipe's rules, with the program's own probes.

A program's submission may declare read-only reconcile probes (``reconcile=[{"goto":
...}, {"check": {...}}]``, the recipe's ``ReconcileProbe``); the host journals them as an
event before the submission can be in flight. ``reconcile_program`` runs each open
submission's probes in a fresh context made from the run's identity (signed in again by
the declaration's ``setup`` first, when it has one) and settles it exactly as a
recipe's (found: verified; absent once its settle period passed: failed; otherwise left
open). An
iteration whose submissions are all settled ends ``stopped``: ``resume_program`` runs its
program again from the start, and each submission already verified is answered from the
record instead of being sent (``IterationCalls._settled_earlier``). Repeat is not retry:
nothing here starts a program on its own.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Any

from northstar.browser import BrowserHost
from northstar.errors import UsageInvalid
from northstar.journal import Journal
from northstar.journal.paths import run_artifacts_dir
from northstar.journal.store import SubmissionRecord
from northstar.plan.compiler import bind
from northstar.plan.model import BoundStep, Plan
from northstar.programs.broker import ProgramBroker
from northstar.programs.calls import PROBE_EVENT
from northstar.programs.declaration import ProgramDeclaration
from northstar.readers.queries import get_run
from northstar.recipe.model import Check, ReconcileProbe, RetryPolicy, Step
from northstar.results import IterationState
from northstar.run.execution import RunOutcome, RunRequest
from northstar.run.identity import RunIdentity, run_identity
from northstar.run.reconcile import (
    IterationVerdict,
    SubmissionCheck,
    SubmissionOutcome,
    decide_submission,
    iteration_verdict,
    probe_detail,
    probe_plan,
    probe_verdict,
)
from northstar.run.recovery import (
    ReconcileDecision,
    check_same_run,
    record_outcome,
    refuse_if_live,
    remaining_iterations,
)
from northstar.run.runner import ProgramRunner
from northstar.run.signin import held_identity, state_file

__all__ = ["reconcile_program", "resume_program"]

_OPEN_STATES = frozenset(
    {IterationState.UNKNOWN, IterationState.RUNNING, IterationState.NEEDS_REVIEW}
)
Probes = dict[tuple[int, str], dict[str, Any]]


def _recorded_probes(journal: Journal, run_id: str) -> Probes:
    events = get_run(journal.path, run_id).events
    return {
        (int(e.payload["iteration"]), str(e.payload["step"])): e.payload
        for e in events
        if e.name == PROBE_EVENT
    }


def _plan(request: RunRequest, number: int) -> Plan:
    row = request.row_for(number)
    plan = bind(request.compiled, row, base_url=request.base_url, iteration=number)
    return replace(plan, steps=())


def _submission_step(plan: Plan, submission: SubmissionRecord, recorded: dict[str, Any]) -> Step:
    probes = [ReconcileProbe.model_validate(p) for p in recorded.get("probes", [])]
    tab = str(recorded.get("tab") or next(iter(plan.tabs)))
    settle = recorded.get("settle")
    return Step(
        id=submission.step_id,
        tab=tab,
        verify_outcome=Check(url="**"),
        reconcile=probes,
        settle=settle if isinstance(settle, int) else None,
    )


async def _check(
    plan: Plan, submission: SubmissionRecord, recorded: dict[str, Any], host: BrowserHost, now: Any
) -> SubmissionCheck:
    step = _submission_step(plan, submission, recorded)
    bound = BoundStep(0, step, plan.default_timeout_ms, RetryPolicy(attempts=1))
    probe = probe_plan(plan, bound)
    if probe is None:
        outcome = SubmissionOutcome.UNPROBED
        return SubmissionCheck(submission.step_id, outcome, submission.sent, step.settle_s)
    result = await ProgramRunner(host).run_iteration(probe)
    verdict = probe_verdict(result)
    # A program's probes get no positive control yet: its absence stands as before.
    outcome = decide_submission(verdict, submission.sent, step.settle_s, now, proven=True)
    detail = probe_detail(probe, result)
    return SubmissionCheck(submission.step_id, outcome, submission.sent, step.settle_s, detail)


def program_iteration_verdict(checks: list[SubmissionCheck]) -> IterationVerdict:
    """Inconclusive: for review; settling: still unknown; otherwise resumable (stopped)."""
    verdict = iteration_verdict(checks, None)
    if verdict.state in (IterationState.NEEDS_REVIEW, IterationState.UNKNOWN):
        return verdict
    return IterationVerdict(
        IterationState.STOPPED,
        "RECONCILED",
        "reconciled: the program did not finish; resume runs it again and its settled "
        "submissions are not sent again",
    )


async def _reconcile_iteration(
    request: RunRequest,
    run_id: str,
    number: int,
    probes: Probes,
    host: BrowserHost,
    journal: Journal,
) -> ReconcileDecision:
    plan = _plan(request, number)
    checks = []
    for submission in journal.open_submissions(run_id, number):
        recorded = probes.get((number, submission.step_id), {})
        check = await _check(plan, submission, recorded, host, journal.now())
        record_outcome(journal, run_id, number, check)
        checks.append(check)
    verdict = program_iteration_verdict(checks)
    journal.mark_iteration(
        run_id, number, verdict.state, reason_code=verdict.code, reason=verdict.reason
    )
    outcomes = tuple((check.step_id, check.outcome) for check in checks)
    return ReconcileDecision(
        number, verdict.state, outcomes, verdict.reason, verdict.code, verdict.decidable_at
    )


def _status_after(journal: Journal, run_id: str) -> str:
    states = {state for state, _ in journal.iteration_states(run_id).values()}
    if IterationState.NEEDS_REVIEW in states:
        return "needs_review"
    if states & {IterationState.UNKNOWN, IterationState.RUNNING}:
        return "blocked"
    return "stopped"


async def reconcile_program(
    run_id: str, credential: str | None, request: RunRequest, *, host: BrowserHost, journal: Journal
) -> list[ReconcileDecision]:
    """Probe every unsettled iteration's open submissions and record what was found."""
    journal.check_credential(run_id, credential)
    record = journal.run_record(run_id)
    refuse_if_live(record)
    check_same_run(record, request)
    probes = _recorded_probes(journal, run_id)
    decisions = []
    async with _signed_in(request, record.profile, host, journal, run_id) as identity:
        # Probes look in the run's own signed-in state, and can send nothing.
        probing = host.read_only(identity.storage_state)
        for number, (state, _) in sorted(journal.iteration_states(run_id).items()):
            if state in _OPEN_STATES:
                decisions.append(
                    await _reconcile_iteration(request, run_id, number, probes, probing, journal)
                )
    journal.finish_run(run_id, _status_after(journal, run_id))
    return decisions


def _signed_in(
    request: RunRequest, recorded_profile: str, host: BrowserHost, journal: Journal, run_id: str
) -> AbstractAsyncContextManager[RunIdentity]:
    """The run's identity (its saved state or recorded profile), signed in again by the
    declaration's ``setup`` when it has one: the run's own held state was removed."""
    start = run_identity(request.profile, request.state, recorded_profile=recorded_profile)
    held_at = state_file(run_artifacts_dir(journal.path, run_id), lane=0)
    values = request.row_for(1)
    return held_identity(host, request.compiled, values, request.base_url, held_at, start)


async def resume_program(
    run_id: str,
    credential: str | None,
    request: RunRequest,
    declaration: ProgramDeclaration,
    *,
    host: BrowserHost,
    journal: Journal,
) -> RunOutcome:
    """Run the iterations not verified yet, once every outcome is settled."""
    journal.check_credential(run_id, credential)
    record = journal.run_record(run_id)
    refuse_if_live(record)
    check_same_run(record, request)
    rest = remaining_iterations(record, journal.iteration_states(run_id), journal)
    if not rest:
        raise UsageInvalid(
            f"every iteration of run {run_id} is already verified",
            fix="Nothing to resume; start a new run for more iterations.",
        )
    journal.finish_run(run_id, "running")
    journal.event(run_id, "run_resumed", first=rest[0], remaining=len(rest))
    assert credential is not None  # checked above
    broker = ProgramBroker(request, declaration, host=host, journal=journal)
    broker.attach(run_id, credential)
    return await broker.continue_run(rest)
