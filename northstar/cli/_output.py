"""What the CLI prints: one-line errors, step lines, a run's ending, and exit codes.

A run's last lines, its ``--json`` summary and the process's exit status come from the
journal through ``northstar.readers.endings`` (``report_ending``), never from counts kept
here. The exit statuses are the table of endings there (the documentation's exit code page
is generated from it):

    0   every iteration verified
    1   an iteration was not verified
    2   bad input or usage: nothing was started
    3   needs review (an output could not be saved, an inconclusive reconcile)
    4   blocked: an unknown outcome must be reconciled first (or the run was interrupted)
    5   stopped by its binding: the definition, a selected file or the profile changed
    6   a page tried to leave its origins (ORIGIN_BLOCKED)
    7   the site could not be reached (SITE_UNREACHABLE)
    8   the browser closed, or could not be started
    9   the journal cannot be used (JOURNAL_ERROR)
    10  could not sign in: `signed_in` failed after `setup` ran again (SIGN_IN_FAILED)
    130 stopped by Ctrl-C or SIGTERM
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from os import PathLike
from typing import TYPE_CHECKING, Any

import click
import structlog

from northstar.errors import NorthstarError, error_line, fix_text, printable
from northstar.logs import json_logging
from northstar.readers.ending_text import ending_lines
from northstar.readers.endings import ENDINGS, RunEnding, ending_for, ending_for_error, read_ending
from northstar.readers.queries import iteration_rows
from northstar.results import IterationResult, StepResult, StepStatus

if TYPE_CHECKING:  # the run machinery loads after `northstar run` has started its driver
    from northstar.run.execution import RunOutcome

__all__ = [
    "EXIT_CODES",
    "exit_code_for_error",
    "exit_code_for_status",
    "expected_errors",
    "fix_text",
    "format_error",
    "notice",
    "outcome_to_dict",
    "print_result",
    "report_ending",
    "report_error",
    "step_line",
]

EXIT_CODES = {row.name: row.exit_code for row in ENDINGS}
# The names these statuses had before the table of endings, kept for scripts that use them.
EXIT_CODES |= {"bad_input": EXIT_CODES["usage_error"], "blocked": EXIT_CODES["unknown_outcome"]}


def exit_code_for_error(error: NorthstarError) -> int:
    """The exit status of a command that ended with ``error`` (the table of endings)."""
    return ending_for_error(error).exit_code


def exit_code_for_status(status: str) -> int:
    """A run's status as the process's exit code, when no stop reason tells more."""
    return ending_for(status, None).exit_code


def format_error(error: NorthstarError) -> str:
    """One line: code, place, message and the fix (control characters escaped)."""
    return error_line(error)


def report_error(error: NorthstarError) -> None:
    """The one-line error on stderr; with ``--log-json``, a ``command_failed`` JSON event."""
    if json_logging():
        structlog.get_logger("northstar.cli").error("command_failed", **error.to_dict())
        return
    click.echo(format_error(error), err=True)


def notice(line: str) -> None:
    """A line for a person on stderr (the run id); left out when stderr is JSON lines."""
    if not json_logging():
        click.echo(line, err=True)


@contextmanager
def expected_errors() -> Iterator[None]:
    """Turn a NorthstarError into its one-line message and exit code; never a traceback."""
    try:
        yield
    except NorthstarError as exc:
        report_error(exc)
        sys.exit(exit_code_for_error(exc))


def step_line(step: StepResult) -> str:
    """A compact line per step for people reading a terminal."""
    mark = {StepStatus.PASSED: "ok  ", StepStatus.FAILED: "FAIL"}.get(step.status, "--  ")
    line = f"  {mark} {step.step_id:<22} {step.tab:<10} {step.kind:<14} {step.duration_ms:>8.0f} ms"
    if step.attempts > 1:
        line += f" ({step.attempts} attempts)"
    if step.error:
        line += f"  {step.error['code']}: {step.error['message']}"
    return printable(line)


def print_result(result: IterationResult, *, echo: Callable[[str], None]) -> None:
    for step in result.steps:
        echo(step_line(step))
    for name, value in result.outputs.items():
        echo(printable(f"  output {name} = {value}"))
    verdict = "verified" if result.verified else f"NOT verified ({result.state})"
    echo(
        f"iteration {result.iteration}: {verdict} in {result.duration_ms / 1000:.2f} s, "
        f"{result.evidence_count} checks"
        + (f"; {result.reason_code} at step {result.failing_step!r}" if result.reason_code else "")
    )


def outcome_to_dict(
    outcome: RunOutcome, ending: RunEnding, rows: Mapping[int, Mapping[str, str]] | None = None
) -> dict[str, Any]:
    """``--json``: the ending (the journal's counts and reason), then this process's results.

    Each iteration names its ``row``: the values it ran with as the journal keeps them
    (secrets redacted), ``None`` where the journal has none.
    """
    rows = rows or {}
    return ending.to_dict() | {
        "outputs": [{"iteration": i, "name": k, "value": v} for i, k, v in outcome.summary.outputs],
        "iterations": [
            result.to_dict() | {"row": rows.get(result.iteration)} for result in outcome.results
        ],
        "error": _error_dict(outcome.error, outcome.run_id),
        "artifacts": str(outcome.artifacts) if outcome.artifacts else None,
    }


def _error_dict(error: NorthstarError | None, run_id: str) -> dict[str, Any] | None:
    if error is None:
        return None
    error.with_context(run_id=run_id)
    return error.to_dict() | {"fix": fix_text(error)}


def report_ending(
    outcome: RunOutcome,
    journal: str | PathLike[str],
    *,
    as_json: bool,
    echo: Callable[[str], None],
) -> int:
    """Print how the run ended, as the journal has it; the exit status to end with.

    A run of one iteration also shows its steps (from this process's result).
    """
    ending = read_ending(journal, outcome.run_id)
    if as_json:
        rows = iteration_rows(journal, outcome.run_id)
        echo(json.dumps(outcome_to_dict(outcome, ending, rows), indent=2, default=str))
    else:
        if ending.total == 1 and len(outcome.results) == 1:
            print_result(outcome.results[0], echo=echo)
        for line in ending_lines(ending):
            echo(line)
    return exit_code_for_status(ending.status) if ending.exit_code is None else ending.exit_code
