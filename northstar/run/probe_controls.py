"""Running a reconcile probe read-only, and proving it with a positive control.

Every probe runs in a context from ``BrowserHost.read_only``: started from the run's
identity (``northstar.run.identity``: the state its iterations had) and unable to send
anything but reads. A probe may prove a submission absent only when it has been seen to
find a known effect of the same recipe: after a submission is verified, the run engine
runs that submission's probe once (the positive control) and the journal keeps the
result per definition hash, base URL and submit step. A probe that failed its control, or
was never given one, is blind: reconcile says ``PROBE_BLIND`` instead of "absent".

When it costs: one read-only context and the probe's page loads, by default for the
first verified submission of each submit step per run (start or resume);
``control_due`` says when with ``every`` set (``--probe-control-every N``).
Reconcile also runs a control on demand before it judges an absence when no control is
recorded and the same run has a verified submission of that step to look for.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from northstar.browser import BrowserHost
from northstar.journal import Journal, ProbeControl
from northstar.plan.model import Plan
from northstar.run.identity import RunIdentity
from northstar.run.reconcile import ProbeVerdict, probe_detail, probe_plan, probe_verdict
from northstar.run.runner import ProgramRunner

__all__ = ["ProbeReading", "control_due", "is_proven", "read_probe", "run_control"]

log = structlog.get_logger("northstar.run.probe_controls")


@dataclass(frozen=True)
class ProbeReading:
    """What one probe run saw: its verdict, and what it looked for and the page showed."""

    verdict: ProbeVerdict
    detail: str


def control_due(verified_so_far: int, every: int) -> bool:
    """Whether the ``verified_so_far``-th verified submission of a step gets a control.

    The first always does; with ``every`` > 0, every ``every``-th after it too.
    """
    if verified_so_far == 1:
        return True
    return every > 0 and verified_so_far % every == 0


async def read_probe(
    plan: Plan, step_id: str, host: BrowserHost, identity: RunIdentity
) -> ProbeReading:
    """Run a submit step's probe in a read-only context from the run's identity."""
    probe = probe_plan(plan, plan.step(step_id))
    if probe is None:
        return ProbeReading(ProbeVerdict.INCONCLUSIVE, "the step has no reconcile probe")
    probing = host.read_only(identity.storage_state)
    result = await ProgramRunner(probing).run_iteration(probe)
    return ProbeReading(probe_verdict(result), probe_detail(probe, result))


def is_proven(journal: Journal, definition_hash: str, base_url: str | None, step_id: str) -> bool:
    """Whether the step's latest positive control found its known effect.

    Controls are kept per the run's definition hash (the recipe's, without the digests of
    an iteration's selected files: they do not change what a probe can see).
    """
    control = journal.probe_control(definition_hash, base_url or "", step_id)
    return control is not None and control.proven


async def run_control(
    plan: Plan,
    step_id: str,
    *,
    run_id: str,
    definition_hash: str,
    base_url: str | None,
    host: BrowserHost,
    identity: RunIdentity,
    journal: Journal,
) -> bool:
    """Probe a submission known to be verified; record whether the probe found it."""
    reading = await read_probe(plan, step_id, host, identity)
    proven = reading.verdict is ProbeVerdict.FOUND
    control = ProbeControl(
        definition_hash,
        base_url or "",
        step_id,
        proven,
        run_id,
        plan.iteration,
        reading.detail,
        "",
    )
    journal.record_probe_control(control, secrets=plan.secrets)
    journal.event(run_id, "probe_control", iteration=plan.iteration, step=step_id, proven=proven)
    log.info("probe_control", step=step_id, proven=proven)
    return proven
