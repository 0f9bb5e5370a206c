"""Starting a distributed run: validate, record the run, enqueue its iterations, follow it.

The run is created in the journal exactly as a local run is (``open_run``: bound to the
recipe's definition hash, its credential saved beside this command), then each iteration
goes to the queue with its row (secret values left out: DBOS stores workflow inputs) and
the row's parameter fingerprint, which every worker checks before it runs the iteration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from northstar import readers
from northstar.distributed.dbos_setup import QueuedIteration, enqueue_iterations
from northstar.distributed.decisions import queued_row
from northstar.errors import UsageInvalid
from northstar.journal import Journal
from northstar.journal.paths import is_postgres_url
from northstar.plan.compiler import bind
from northstar.recipe.params import params_fingerprint
from northstar.run.execution import RunRequest, open_run

__all__ = [
    "files_by_row",
    "options_not_carried",
    "queued_iterations",
    "submit_run",
    "wait_for_run",
]


def queued_iterations(request: RunRequest) -> list[QueuedIteration]:
    specs = request.compiled.recipe.params
    numbers = range(1, request.repeat.count + 1)
    return [
        (n, queued_row(specs, request.row_for(n)), params_fingerprint(specs, request.row_for(n)))
        for n in numbers
    ]


def options_not_carried(request: RunRequest) -> list[str]:
    """What a worker would not honour, so ``run --queue`` refuses it before recording.

    A worker builds its request from the journal's record and the queued row: it opens a
    context per iteration (no ``--keep-context``) and feeds no BehaviorMonitor (no
    ``--monitor``). Selected files are carried by their digests (``files_by_row``).
    """
    return [flag for flag, asked in _FLAGS if getattr(request, asked)]


def files_by_row(request: RunRequest) -> dict[str, list[str]]:
    """Each row's selected-file digests, by its parameter fingerprint (rows with files only).

    A worker's copies must have these bytes: one with other files stops the run with
    ``FILE_CHANGED`` before its iteration starts. Rows, not iterations: a repeat adds none.
    """
    recipe = request.compiled.recipe
    specs = recipe.params
    files: dict[str, list[str]] = {}
    selects = any(p.type == "file" for p in specs.values()) or any(s.upload for s in recipe.steps)
    for row in request.rows if selects else ():  # no plan to render when nothing is selected
        plan = bind(request.compiled, row, base_url=request.base_url, iteration=1)
        if plan.files:
            files[params_fingerprint(specs, row)] = [digest for _, digest in plan.files]
    return files


_FLAGS = (("--keep-context", "keep_context"), ("--monitor", "monitor"))


def submit_run(request: RunRequest, journal_url: str, queue_name: str) -> str:
    """Record the run and enqueue every iteration; the run id."""
    if not is_postgres_url(journal_url):
        raise UsageInvalid(
            "--queue needs a Postgres journal shared by the workers",
            fix="Pass --journal postgresql://... (or set NORTHSTAR_JOURNAL) with --queue.",
        )
    if request.repeat.interval_s:
        raise UsageInvalid(
            "--interval is not kept by a queue: workers take iterations as lanes free up",
            fix="Drop --interval, or run without --queue.",
        )
    refused = options_not_carried(request)
    if refused:
        raise UsageInvalid(
            f"{', '.join(refused)}: not carried to the workers of a queue",
            fix="Drop them, or run without --queue.",
        )
    with Journal.open(journal_url) as journal:
        run_id, _ = open_run(request, journal)
        journal.event(
            run_id,
            "run_queued",
            queue=queue_name,
            iterations=request.repeat.count,
            files=files_by_row(request),
        )
    enqueue_iterations(journal_url, queue_name, run_id, queued_iterations(request))
    return run_id


async def wait_for_run(
    journal_url: str,
    run_id: str,
    *,
    every: float,
    on_change: Callable[[readers.RunDetail], None],
) -> readers.RunDetail:
    """Re-read the run until its recorded status is no longer ``running``."""
    last: readers.RunDetail | None = None
    while True:
        detail = readers.get_run(journal_url, run_id, is_alive=lambda pid: True)
        if detail != last:
            on_change(detail)
            last = detail
        if detail.summary.status != "running":
            return detail
        await asyncio.sleep(every)
