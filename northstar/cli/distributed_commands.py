"""``northstar worker``, and ``northstar run --queue``: runs spread over many workers.

Kept apart from ``run_commands`` so a local run loads neither DBOS nor psycopg. The work
is in ``northstar.distributed``; this module parses options and prints.
"""

from __future__ import annotations

import asyncio
import os
import sys
import traceback
from contextlib import suppress
from pathlib import Path
from typing import Any

import click

from northstar._stop_requests import catch_stop_signals, on_stop_request
from northstar.cli._inputs import browser_options, files_dir_option, files_dirs
from northstar.cli._options import journal_option
from northstar.cli._output import exit_code_for_status, expected_errors, report_error
from northstar.errors import NorthstarError, UsageInvalid
from northstar.journal.paths import is_postgres_url, resolve_journal
from northstar.readers.ending_text import ending_lines
from northstar.readers.endings import read_ending
from northstar.run.execution import RunRequest

__all__ = ["run_queued", "worker"]


def _journal_url(journal: str | None) -> str:
    target = resolve_journal(journal)
    if not isinstance(target, str) or not is_postgres_url(target):
        raise UsageInvalid(
            "distributed runs need a Postgres journal that every worker reaches",
            fix="Pass --journal postgresql://... or set NORTHSTAR_JOURNAL to one.",
        )
    return target


def _require_dbos() -> None:
    """Distributed runs need the optional extra; say so in one line, not a traceback."""
    try:
        import dbos  # noqa: F401
    except ImportError:
        raise UsageInvalid(
            "distributed runs need DBOS Transact, which is not installed",
            fix="pip install 'northstar[distributed]'",
        ) from None


def run_queued(request: RunRequest, options: dict[str, Any]) -> None:
    """``run --queue``: enqueue, then follow the run (unless ``--detach``); exit by status."""
    url = _journal_url(options["journal"])
    _require_dbos()
    from northstar.distributed.submit import submit_run, wait_for_run

    run_id = submit_run(request, url, options["queue"])
    click.echo(f"run {run_id} queued on {options['queue']}", err=True)
    if options.get("detach"):
        click.echo(run_id)
        return
    shown: set[int] = set()

    def progress(detail: Any) -> None:
        for view in detail.iterations:
            if view.number not in shown and view.state not in ("pending", "running"):
                shown.add(view.number)
                total = detail.summary.total_iterations
                click.echo(f"iteration {view.number}/{total}: {view.state}", err=True)

    asyncio.run(wait_for_run(url, run_id, every=0.5, on_change=progress))
    ending = read_ending(url, run_id, is_alive=lambda pid: True)  # its workers may be elsewhere
    for line in ending_lines(ending):
        click.echo(line)
    sys.exit(ending.exit_code if ending.exit_code is not None else exit_code_for_status("failed"))


@click.command()
@journal_option
@click.option("--queue", "queue_name", required=True, help="The queue to serve.")
@click.option(
    "--concurrency",
    type=click.IntRange(1, 32),
    default=1,
    show_default=True,
    help="Lanes: iterations this worker runs at once, in one browser.",
)
@click.option(
    "--name",
    default=None,
    help="This worker's name; a worker restarted with the same name recovers its work.",
)
@click.option(
    "--takeover-every",
    type=click.FloatRange(0.2, 3600),
    default=5.0,
    show_default=True,
    help="Seconds between checks for dead workers whose unfinished work this one takes over.",
)
@files_dir_option
@click.option(
    "--poll-every",
    type=click.FloatRange(0.05, 60),
    default=0.2,
    show_default=True,
    help="Seconds between this worker's polls of the queue (raise it for large fleets).",
)
@click.option(
    "--stop-deadline",
    type=click.FloatRange(0.5, 3600),
    default=10.0,
    show_default=True,
    help="Seconds from SIGTERM or Ctrl-C to exit; what is still running then is left to recovery.",
)
@click.option(
    "--backoff-cap",
    type=click.FloatRange(0.1, 3600),
    default=30.0,
    show_default=True,
    help="Longest wait in seconds between two probes of a database that does not answer.",
)
@click.option(
    "--give-up-after",
    type=click.FloatRange(1, 7 * 24 * 3600),
    default=600.0,
    show_default=True,
    help="Seconds the database may not answer before the worker exits (JOURNAL_UNAVAILABLE).",
)
@browser_options
def worker(**options: Any) -> None:
    """Serve a queue of distributed runs until SIGTERM or Ctrl-C.

    Exit codes: 0 stopped with everything it took settled; 1 a worker error; 2 bad
    options; 75 the database did not answer within --give-up-after (JOURNAL_UNAVAILABLE);
    130 stopped with iterations left to recovery (the next worker claims them).
    """
    from northstar.browser.settings import BrowserSettings

    with expected_errors():
        url = _journal_url(options["journal"])
        _require_dbos()
    from northstar.distributed.outage import Patience
    from northstar.distributed.stopping import StopDeadline
    from northstar.distributed.worker import Worker, default_worker_name

    name = options["name"] or default_worker_name()
    patience = Patience(
        stop_deadline=options["stop_deadline"],
        backoff_first=min(1.0, options["backoff_cap"]),
        backoff_cap=options["backoff_cap"],
        give_up_after=options["give_up_after"],
    )
    serving = Worker(
        url,
        options["queue_name"],
        concurrency=options["concurrency"],
        name=name,
        takeover_every=options["takeover_every"],
        poll_every=options["poll_every"],
        patience=patience,
        on_takeover=_say_taken_over(name),
        files_dirs=files_dirs(options["files_dirs"]),
        state=str(Path(options["state"]).resolve()) if options.get("state") else None,
    )
    deadline = StopDeadline(
        patience.stop_deadline, serving.exit_code, on_expiry=_say_cut_short(serving)
    ).start()
    serving.on_stopping = deadline.arm
    ready = f"worker {name} serving {options['queue_name']} ({options['concurrency']} lanes)"
    settings = BrowserSettings(
        executable=options.get("browser"),
        headless=not options.get("headed"),
        slow_mo_ms=options.get("slow_mo") or 0,
        storage_state=options.get("profile"),
    )
    _exit_now(_serve_to_the_end(serving, settings, ready, deadline))


def _serve_to_the_end(serving: Any, settings: Any, ready: str, deadline: Any) -> int:
    """Serve until stopped or ended; the exit code. Every path ends in one line."""
    from northstar.distributed.stopping import exit_code_for_error as worker_exit_code

    try:
        asyncio.run(_serve(serving, settings, ready, deadline))
    except NorthstarError as exc:
        report_error(exc)
        return worker_exit_code(exc)
    except Exception:  # a bug shows as itself, and the process still ends
        traceback.print_exc()
        return 1
    finally:
        deadline.done()
    left = serving.left_to_recovery
    click.echo("worker stopped" + (f"; {left} iteration(s) left to recovery" if left else ""),
               err=True)  # fmt: skip
    return int(serving.exit_code())


def _exit_now(code: int) -> None:
    """Exit without waiting for threads: DBOS's may be blocked on a database that is gone."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _say_taken_over(name: str) -> Any:
    def say(dead: str, count: int) -> None:
        click.echo(f"worker {name} took over {count} unfinished iteration(s) of {dead}", err=True)

    return say


def _say_cut_short(serving: Any) -> Any:
    def say(code: int) -> None:
        left = serving.in_progress + serving.left_to_recovery
        click.echo(
            f"worker {serving.name} not stopped within {serving.patience.stop_deadline:g} s: "
            f"exiting ({code}); {left} iteration(s) left to recovery",
            err=True,
        )

    return say


async def _serve(serving: Any, settings: Any, ready: str, deadline: Any) -> None:
    loop = asyncio.get_running_loop()

    def hand_on() -> None:
        deadline.arm()  # from now on the process ends within the deadline, whatever happens
        with suppress(RuntimeError):
            loop.call_soon_threadsafe(serving.stop.request)

    with catch_stop_signals(), on_stop_request(hand_on):
        await serving.serve(settings, on_ready=lambda: click.echo(ready, err=True))
