"""``northstar runs``, ``show`` and ``watch``: read the journal; they cannot start anything."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from northstar import readers
from northstar.cli._options import journal_option
from northstar.cli._output import expected_errors
from northstar.journal.paths import resolve_journal, run_artifacts_dir
from northstar.readers.artifacts import ArtifactFiles
from northstar.readers.bounded import iteration_pages, read_window, window_reader
from northstar.readers.changes import change_lines
from northstar.readers.diagnoses import read_diagnoses, render_diagnoses
from northstar.readers.ending_text import ending_lines
from northstar.readers.endings import read_ending
from northstar.readers.rendering import header_lines, iteration_lines
from northstar.readers.views import RunDetail

__all__ = ["ChangePrinter", "runs", "show", "watch"]


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
@click.option(
    "--last",
    type=click.IntRange(0, 10_000),
    default=20,
    show_default=True,
    help="How many of the latest iterations to show beside the failed ones.",
)
@click.option("--all", "show_all", is_flag=True, help="Page through every iteration.")
def show(run_id: str, journal: str | None, as_json: bool, last: int, show_all: bool) -> None:
    """Show a run: its failed and unknown iterations and the latest ones, with their steps."""
    with expected_errors():
        path = resolve_journal(journal)
        detail = read_window(path, run_id, tail=last)
        if show_all and not as_json:
            _show_every_iteration(path, detail)
            return
        if show_all:
            detail = readers.get_run(path, run_id)
        diagnoses = read_diagnoses(path, run_id)
        if as_json:
            out = detail.to_dict() | {"diagnoses": [d.to_dict() for d in diagnoses]}
            out["files"] = _files_of_failures(detail, run_artifacts_dir(path, run_id))
            click.echo(json.dumps(out, indent=2, default=str))
        else:
            click.echo(readers.render_run(detail, run_artifacts_dir(path, run_id)))
            if diagnoses:
                click.echo(render_diagnoses(diagnoses))
            _echo_ending(path, run_id)


def _show_every_iteration(path: str | Path, detail: RunDetail) -> None:
    """The header, then every iteration a page at a time: memory holds one page."""
    artifacts = run_artifacts_dir(path, detail.run_id)
    click.echo("\n".join(header_lines(detail)))
    status = detail.effective_status
    for page in iteration_pages(path, detail.run_id, run_status=status):
        click.echo("\n".join(iteration_lines(page, artifacts)))


def _files_of_failures(detail: RunDetail, artifacts: Path) -> list[dict[str, Any]]:
    """Each iteration not verified with its screenshots and trace (absolute paths)."""
    out = []
    listing = ArtifactFiles(artifacts)
    for iteration in detail.iterations:
        files = listing.of(iteration.number)
        if iteration.effective_state != "verified" and files:
            trace = str(files.trace) if files.trace else None
            shots = [str(path) for path in files.screenshots]
            out.append({"iteration": iteration.number, "screenshots": shots, "trace": trace})
    return out


@click.command()
@click.argument("run_id")
@journal_option
@click.option("--every", type=click.FloatRange(0.05, 60), default=0.5, help="Seconds per poll.")
def watch(run_id: str, journal: str | None, every: float) -> None:
    """Follow a live run (started by another process) until it ends; print what changes.

    A queued run ends when no iteration is left in a worker's hands, so ``reconcile`` or
    ``resume`` may take it at once (a blocked run's other lanes finish first).
    """
    with expected_errors():
        detail = asyncio.run(
            readers.follow_run(
                resolve_journal(journal),
                run_id,
                poll=lambda: asyncio.sleep(every),
                on_change=ChangePrinter(click.echo),
                read=window_reader(),
            )
        )
        sys.exit(_echo_ending(resolve_journal(journal), detail.run_id) or 0)


def _echo_ending(path: str | Path, run_id: str) -> int | None:
    """A final run's ending lines (as ``run`` printed them); its exit status."""
    ending = read_ending(path, run_id)
    if ending.final:
        click.echo("\n".join(ending_lines(ending)))
    return ending.exit_code


class ChangePrinter:
    """Keeps the last view it was shown, so each new one prints only what differs."""

    def __init__(self, echo: Callable[[str], None]) -> None:
        self._echo = echo
        self._last: RunDetail | None = None

    def __call__(self, detail: RunDetail) -> None:
        for line in change_lines(self._last, detail):
            self._echo(line)
        self._last = detail
