"""``northstar report``: one self-contained HTML page for a run (reads the journal only)."""

from __future__ import annotations

from pathlib import Path

import click

from northstar.cli._options import journal_option
from northstar.cli._output import expected_errors
from northstar.cli._writes import write_text
from northstar.journal.paths import resolve_journal, run_artifacts_dir
from northstar.readers.bounded import read_window
from northstar.readers.report import render_report

__all__ = ["report"]

# A report expands at most this many iterations that are not verified; verified ones are counted.
_FAILURES_SHOWN = 200


@click.command()
@click.argument("run_id")
@journal_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="The HTML file to write (default: report.html in the run's artifacts folder).",
)
@click.option("--force", is_flag=True, help="Replace the --out file if it exists.")
def report(run_id: str, journal: str | None, out: str | None, force: bool) -> None:
    """Write RUN_ID as one HTML file: verdicts, steps, evidence, screenshots, signals.

    The default file, the run's own ``report.html``, is rewritten each time; a file given
    with ``--out`` is replaced only with ``--force``, and a link is never written through.
    """
    with expected_errors():
        path = resolve_journal(journal)
        detail = read_window(path, run_id, tail=20, cap=_FAILURES_SHOWN)
        artifacts = run_artifacts_dir(path, run_id)
        target = Path(out) if out else artifacts / "report.html"
        page = render_report(detail, artifacts, page_dir=target.parent)
        write_text(target, page, force=force or out is None, option="--out")
        click.echo(str(target))
