"""``northstar worker``, and ``northstar run --queue``: runs spread over many workers.

Kept apart from ``run_commands`` so a local run loads neither DBOS nor psycopg. The work
is in ``northstar.distributed``; this module parses options and prints.
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import suppress
from typing import Any

import click

from northstar._stop_requests import catch_stop_signals, on_stop_request
from northstar.cli._inputs import browser_options, files_dir_option, files_dirs
from northstar.cli._options import journal_option
from northstar.cli._output import exit_code_for_status, expected_errors
from northstar.errors import UsageInvalid
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
@browser_options
def worker(**options: Any) -> None:
    """Serve a queue of distributed runs until SIGTERM or Ctrl-C."""
    from northstar.browser.settings import BrowserSettings

    with expected_errors():
        url = _journal_url(options["journal"])
        _require_dbos()
        from northstar.distributed.worker import Worker, default_worker_name

        name = options["name"] or default_worker_name()
        serving = Worker(
            url,
            options["queue_name"],
            concurrency=options["concurrency"],
            name=name,
            takeover_every=options["takeover_every"],
            on_takeover=_say_taken_over(name),
            files_dirs=files_dirs(options["files_dirs"]),
        )
        ready = f"worker {name} serving {options['queue_name']} ({options['concurrency']} lanes)"
        settings = BrowserSettings(
            executable=options.get("browser"),
            headless=not options.get("headed"),
            slow_mo_ms=options.get("slow_mo") or 0,
            storage_state=options.get("profile"),
        )
        asyncio.run(_serve(serving, settings, ready))


def _say_taken_over(name: str) -> Any:
    def say(dead: str, count: int) -> None:
        click.echo(f"worker {name} took over {count} unfinished iteration(s) of {dead}", err=True)

    return say


async def _serve(serving: Any, settings: Any, ready: str) -> None:
    loop = asyncio.get_running_loop()

    def hand_on() -> None:
        with suppress(RuntimeError):
            loop.call_soon_threadsafe(serving.stop.request)

    with catch_stop_signals(), on_stop_request(hand_on):
        await serving.serve(settings, on_ready=lambda: click.echo(ready, err=True))
    click.echo("worker stopped", err=True)
