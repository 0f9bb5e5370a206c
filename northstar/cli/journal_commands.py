"""``northstar runs``, ``show`` and ``watch``: read the journal; they cannot start anything."""

from __future__ import annotations

import asyncio
import json
import sys

import click

from northstar import readers
from northstar.cli._options import journal_option
from northstar.cli._output import expected_errors
from northstar.journal.paths import resolve_journal
from northstar.readers.diagnoses import read_diagnoses, render_diagnoses

__all__ = ["runs", "show", "watch"]


@click.command()
@journal_option
@click.option("--limit", type=int, default=20, show_default=True, help="How many runs.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def runs(journal: str | None, limit: int, as_json: bool) -> None:
    """List recent runs, newest first."""
    with expected_errors():
        found = readers.list_runs(resolve_journal(journal), limit)
        if as_json:
            click.echo(json.dumps([r.to_dict() for r in found], indent=2, default=str))
        else:
            click.echo(readers.render_runs(found))


@click.command()
@click.argument("run_id")
@journal_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(run_id: str, journal: str | None, as_json: bool) -> None:
    """Show a run: iterations, steps, evidence, outputs and reasons."""
    with expected_errors():
        path = resolve_journal(journal)
        detail = readers.get_run(path, run_id)
        diagnoses = read_diagnoses(path, run_id)
        if as_json:
            out = detail.to_dict() | {"diagnoses": [d.to_dict() for d in diagnoses]}
            click.echo(json.dumps(out, indent=2, default=str))
        else:
            click.echo(readers.render_run(detail))
            if diagnoses:
                click.echo(render_diagnoses(diagnoses))


@click.command()
@click.argument("run_id")
@journal_option
@click.option("--every", type=click.FloatRange(0.05, 60), default=0.5, help="Seconds per poll.")
def watch(run_id: str, journal: str | None, every: float) -> None:
    """Follow a live run (started by another process) until it ends."""
    with expected_errors():
        detail = asyncio.run(
            readers.follow_run(
                resolve_journal(journal),
                run_id,
                poll=lambda: asyncio.sleep(every),
                on_change=lambda d: click.echo(readers.render_run(d) + "\n"),
            )
        )
        sys.exit(0 if detail.summary.effective_status == "verified" else 1)
