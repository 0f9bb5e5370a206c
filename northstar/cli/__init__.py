"""The ``northstar`` command: a thin click front over the async core.

Commands that start or continue runs (``run``, ``reconcile``, ``resume``) are kept apart
from those that only read the journal (``runs``, ``show``, ``watch``). Every expected
error is one line, ``error[CODE] where: message (fix: ...)``, never a traceback; exit
codes are listed in ``northstar.cli._output``.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from northstar.cli._output import EXIT_CODES
from northstar.cli.case_commands import record
from northstar.cli.journal_commands import runs, show, watch
from northstar.cli.recovery_commands import reconcile, resume
from northstar.cli.report_commands import report
from northstar.cli.run_commands import run, schema, validate
from northstar.logs import configure_logging

__all__ = ["EXIT_CODES", "cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--log-json", is_flag=True, help="Write logs to stderr as JSON lines.")
@click.option("-v", "--verbose", is_flag=True, help="Log every step (to stderr).")
@click.version_option(package_name="northstar")
def cli(log_json: bool, verbose: bool) -> None:
    """Run stored browser procedures (recipes) and prove each iteration."""
    configure_logging(json=log_json, verbose=verbose)


for command in (run, record, validate, schema, runs, show, watch, report, reconcile, resume):
    cli.add_command(command)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="northstar")
