"""The ``northstar`` command: a thin click front over the async core.

Commands that start or continue runs (``run``, ``reconcile``, ``resume``) are kept apart
from those that only read the journal (``runs``, ``show``, ``watch``, ``report``): those
import ``_options`` (shared options), ``_output`` and ``northstar.readers``, never
``run_commands`` or the run engine (a contract in ``pyproject.toml`` and a test check it).
``progress`` draws a multi-iteration run's progress line. Every expected
error is one line, ``error[CODE] where: message (fix: ...)``, never a traceback; exit
codes are listed in ``northstar.cli._output``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import click

from northstar._early_start import early_start
from northstar._stop_requests import catch_stop_signals_for
from northstar.cli._output import EXIT_CODES
from northstar.logs import configure_logging

__all__ = ["EXIT_CODES", "cli", "main"]


# Each command is imported when it is used, so `northstar run` does not load the journal
# readers, the report writer or the recovery code (a faster start).
_COMMANDS = {
    "run": "northstar.cli.run_commands:run",
    "record": "northstar.cli.case_commands:record",
    "validate": "northstar.cli.run_commands:validate",
    "schema": "northstar.cli.lint_commands:schema",
    "lint": "northstar.cli.lint_commands:lint",
    "runs": "northstar.cli.journal_commands:runs",
    "show": "northstar.cli.journal_commands:show",
    "watch": "northstar.cli.journal_commands:watch",
    "report": "northstar.cli.report_commands:report",
    "reconcile": "northstar.cli.recovery_commands:reconcile",
    "resume": "northstar.cli.recovery_commands:resume",
    "mcp": "northstar.cli.mcp_commands:mcp",
    "review": "northstar.cli.review_commands:review",
    "import-codegen": "northstar.cli.authoring_commands:import_codegen_command",
    "codegen": "northstar.cli.authoring_commands:codegen",
    "worker": "northstar.cli.distributed_commands:worker",
    "sign-in": "northstar.cli.signin_commands:sign_in",
}


class _LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use (click's documented way)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--log-json", is_flag=True, help="Write logs to stderr as JSON lines.")
@click.option("-v", "--verbose", is_flag=True, help="Log every step (to stderr).")
@click.version_option(package_name="northstar")
def cli(log_json: bool, verbose: bool) -> None:
    """Run stored browser procedures (recipes) and prove each iteration."""
    configure_logging(json=log_json, verbose=verbose)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(argv) if argv is not None else sys.argv[1:]
    # `run` boots Playwright's driver while it imports and checks; Ctrl-C asks for a stop.
    with catch_stop_signals_for(args), early_start(args):
        cli.main(args=args, prog_name="northstar")
