"""What the CLI prints: one-line errors, step lines, run summaries, and exit codes.

Exit codes (the documentation's exit code page is generated from ``EXIT_CODES``):

    0   every iteration verified
    1   an iteration was not verified, or the run broke (binding changed)
    2   bad input or usage: nothing was started
    3   needs review (an output could not be saved, an inconclusive reconcile)
    4   blocked: an unknown outcome must be reconciled first
    130 stopped by Ctrl-C or SIGTERM
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click
import structlog

from northstar.errors import InputError, NorthstarError, RunBlocked
from northstar.logs import json_logging
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
    "report_error",
    "report_outcome",
    "step_line",
]

EXIT_CODES = {
    "verified": 0,
    "not_verified": 1,
    "bad_input": 2,
    "needs_review": 3,
    "blocked": 4,
    "stopped": 130,
}


def exit_code_for_error(error: NorthstarError) -> int:
    if isinstance(error, InputError):
        return EXIT_CODES["bad_input"]
    if isinstance(error, RunBlocked):
        return EXIT_CODES["blocked"]
    return EXIT_CODES["not_verified"]


def exit_code_for_status(status: str) -> int:
    """A run's status as the process's exit code."""
    return EXIT_CODES.get(status, EXIT_CODES["not_verified"])


def fix_text(error: NorthstarError) -> str:
    """The error's fix with the real run id in place of the ``RUN_ID`` placeholder, if known."""
    run_id = error.context.get("run_id")
    return error.fix.replace("RUN_ID", str(run_id)) if run_id else error.fix


def format_error(error: NorthstarError) -> str:
    """One line: code, place, message and the fix."""
    return f"error[{error.code}] {error.where()}{error.message} (fix: {fix_text(error)})"


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
    return line


def print_result(result: IterationResult, *, echo: Callable[[str], None]) -> None:
    for step in result.steps:
        echo(step_line(step))
    for name, value in result.outputs.items():
        echo(f"  output {name} = {value}")
    verdict = "verified" if result.verified else f"NOT verified ({result.state})"
    echo(
        f"iteration {result.iteration}: {verdict} in {result.duration_ms / 1000:.2f} s, "
        f"{result.evidence_count} checks"
        + (f"; {result.reason_code} at step {result.failing_step!r}" if result.reason_code else "")
    )


def outcome_to_dict(outcome: RunOutcome) -> dict[str, Any]:
    summary = outcome.summary
    return {
        "run_id": outcome.run_id,
        "status": outcome.status,
        "requested": summary.requested,
        "verified": summary.verified_count,
        "evidence_count": summary.evidence_count,
        "model_calls": summary.model_calls,
        "outputs": [{"iteration": i, "name": k, "value": v} for i, k, v in summary.outputs],
        "iterations": [result.to_dict() for result in outcome.results],
        "error": _error_dict(outcome.error, outcome.run_id),
        "artifacts": str(outcome.artifacts) if outcome.artifacts else None,
    }


def _error_dict(error: NorthstarError | None, run_id: str) -> dict[str, Any] | None:
    if error is None:
        return None
    error.with_context(run_id=run_id)
    return error.to_dict() | {"fix": fix_text(error)}


def report_outcome(outcome: RunOutcome, *, as_json: bool, echo: Callable[[str], None]) -> None:
    if as_json:
        echo(json.dumps(outcome_to_dict(outcome), indent=2, default=str))
        return
    if len(outcome.results) == 1:
        print_result(outcome.results[0], echo=echo)
    if outcome.error is not None and len(outcome.results) != 1:
        echo(format_error(outcome.error.with_context(run_id=outcome.run_id)))
    echo(
        f"run {outcome.run_id}: {outcome.status}, {outcome.summary.verified_count} of "
        f"{outcome.summary.requested} iterations verified"
    )
