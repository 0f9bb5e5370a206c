"""What a distributed worker decides, as plain functions over plain data.

- ``workflow_id``: one DBOS workflow id per run and iteration, so an iteration is never
  enqueued twice (DBOS returns the recorded workflow for an id it already has).
- ``claim_action``: what a lane does with an iteration it dequeued (or that DBOS recovered
  after its worker died), from what the journal says about the run and the iteration.
- ``finished_status``: the run's final status once every iteration has one, else ``None``.
- ``queued_row`` / ``worker_row``: a row without its secret values (DBOS stores workflow
  inputs), and the same row with them filled in from the worker's environment.
- ``submitted_files``: the digests a row's selected files had on the submitting machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from northstar.errors import ParamMissing
from northstar.journal.schema import RunStatus
from northstar.recipe.model import Param
from northstar.results import IterationState

__all__ = [
    "SECRET_ENV_PREFIX",
    "ClaimAction",
    "claim_action",
    "finished_status",
    "queued_row",
    "submitted_files",
    "worker_row",
    "workflow_id",
]

SECRET_ENV_PREFIX = "NORTHSTAR_SECRET_"


def workflow_id(run_id: str, number: int) -> str:
    return f"northstar/{run_id}/{number}"


class ClaimAction(StrEnum):
    RUN = "run"  # never started, or started and nothing was dispatched: (re)run it
    BLOCK = "block"  # a submission was in flight or dispatched: unknown, the run is blocked
    STOP = "stop"  # started, nothing sent, and the run no longer runs: stopped, for resume
    RECORDED = "recorded"  # it already has a verdict: return it, do nothing
    SKIP = "skip"  # the run is blocked, stopped or over: start nothing


_SETTLED = frozenset(
    {
        IterationState.VERIFIED,
        IterationState.FAILED,
        IterationState.NEEDS_REVIEW,
        IterationState.UNKNOWN,
        IterationState.STOPPED,
    }
)


def claim_action(
    run_status: str, state: IterationState | None, open_submissions: int, *, ours: bool = True
) -> ClaimAction:
    """A recovered iteration whose submission may have been sent is never sent again.

    ``open_submissions`` counts the iteration's submissions in flight, dispatched or
    unknown. A settled iteration keeps its verdict (repeat is not retry). ``ours`` says
    the run is still served by this worker's queue: once a local ``resume`` took it over,
    an iteration left on the queue is the resuming process's, running or not, and a
    worker that comes back starts nothing and marks nothing.
    """
    if state in _SETTLED:
        return ClaimAction.RECORDED
    if not ours:
        return ClaimAction.SKIP
    if state is not None and open_submissions:
        return ClaimAction.BLOCK  # whatever the run's status: the journal must say unknown
    if run_status != RunStatus.RUNNING:
        return ClaimAction.SKIP if state is None else ClaimAction.STOP
    return ClaimAction.RUN


_WORST_FIRST = (
    (IterationState.UNKNOWN, RunStatus.BLOCKED),
    (IterationState.NEEDS_REVIEW, RunStatus.NEEDS_REVIEW),
    (IterationState.FAILED, RunStatus.FAILED),
    (IterationState.STOPPED, RunStatus.STOPPED),
)


def finished_status(states: Mapping[IterationState, int], total: int) -> RunStatus | None:
    """The run's status when all ``total`` iterations are settled; ``None`` while any runs.

    ``states`` counts the recorded iterations by state (a handful of rows from the journal,
    however long the run), so deciding after each iteration stays cheap.
    """
    present = {state for state, count in states.items() if count > 0}
    if IterationState.UNKNOWN in present:
        return RunStatus.BLOCKED  # at once: no other lane may start an iteration
    if sum(states.values()) < total or any(state not in _SETTLED for state in present):
        return None
    for state, status in _WORST_FIRST:
        if state in present:
            return status
    return RunStatus.VERIFIED


def queued_row(specs: Mapping[str, Param], row: Mapping[str, Any]) -> dict[str, Any]:
    """The row as it may be stored in the queue: secret values left out."""
    return {name: value for name, value in row.items() if not specs.get(name, Param()).secret}


def worker_row(
    specs: Mapping[str, Param], row: Mapping[str, Any], environ: Mapping[str, str]
) -> dict[str, Any]:
    """The queued row with each secret from ``NORTHSTAR_SECRET_<NAME>`` on this worker."""
    full = dict(row)
    for name, spec in specs.items():
        if not spec.secret or name in full:
            continue
        key = SECRET_ENV_PREFIX + name.upper().replace("-", "_")
        if key in environ:
            full[name] = environ[key]
        elif spec.required:
            raise ParamMissing(
                f"the secret parameter {name!r} is not sent through the queue: "
                f"this worker has no {key}",
                fix=f"Set {key} in this worker's environment.",
            )
    return full


def submitted_files(queued: Mapping[str, Any] | None, fingerprint: str) -> tuple[str, ...] | None:
    """The digests (in the plan's order) recorded for the row with ``fingerprint``.

    ``queued`` is the run's ``run_queued`` event; ``None`` when the run recorded none (a run
    queued before files were recorded), and ``()`` when the row selects no file.
    """
    files = (queued or {}).get("files")
    if not isinstance(files, Mapping):
        return None
    return tuple(str(d) for d in files.get(fingerprint, ()))
