"""``northstar report``: one self-contained HTML page for a run (reads the journal only)."""

from __future__ import annotations

from pathlib import Path

import click

from northstar.cli._options import journal_option
from northstar.cli._output import expected_errors
from northstar.errors import UsageInvalid
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
def report(run_id: str, journal: str | None, out: str | None) -> None:
    """Write RUN_ID as one HTML file: verdicts, steps, evidence, screenshots, signals."""
    with expected_errors():
        path = resolve_journal(journal)
        detail = read_window(path, run_id, tail=20, cap=_FAILURES_SHOWN)
        artifacts = run_artifacts_dir(path, run_id)
        target = Path(out) if out else artifacts / "report.html"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(
                render_report(detail, artifacts, page_dir=target.parent), encoding="utf-8"
            )
        except OSError as exc:
            raise UsageInvalid(
                f"cannot write the report to {target}: {exc.strerror}",
                fix="Pass --out with a writable path.",
            ) from exc
        click.echo(str(target))
