"""The end of ``northstar run`` for a person: what failed, where, and the command to go on.

A run that stops at an iteration it could not verify should not send its reader to the
journal to find out why. The summary names the iteration, its step (number and id), what
the step expected and what the page showed, the iterations that never started, and the
real ``northstar show`` / ``reconcile`` command with the run's id. The lines are built by
pure functions over the outcome, so they are tested without a browser.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from northstar.results import IterationResult, IterationState, StepResult

if TYPE_CHECKING:  # the run machinery loads after `northstar run` has started its driver
    from northstar.run.execution import RunOutcome

__all__ = ["Expectation", "expectation_of", "failure_lines", "next_command", "summary_lines"]

# Playwright's assertion text, as the adapter keeps it: "... / Actual value: X / ...".
_ACTUAL = re.compile(
    r"^(?P<expected>.*?)(?:: Locator expected .*?)? / Actual value: (?P<found>.*?)(?: / .*)?$"
)


@dataclass(frozen=True, slots=True)
class Expectation:
    """What a failing step looked for, and what the page showed instead (if known)."""

    expected: str
    found: str | None


def expectation_of(step: StepResult) -> Expectation | None:
    """The first failed check of ``step``: from its evidence, else from its error's text."""
    for evidence in step.evidence:
        if not evidence.passed:
            return Expectation(evidence.expected, evidence.found or None)
    if step.error is None:
        return None
    message = str(step.error.get("message", ""))
    match = _ACTUAL.match(message)
    if match is None:
        return Expectation(message, None)
    return Expectation(match["expected"], match["found"])


def _failing_step(result: IterationResult) -> tuple[int, StepResult] | None:
    for number, step in enumerate(result.steps, start=1):
        if step.step_id == result.failing_step:
            return number, step
    return None


def failure_lines(result: IterationResult, total: int) -> list[str]:
    """The failing iteration: its verdict, step, expected and found, and the reason."""
    code = result.reason_code or result.state.upper()
    found_step = _failing_step(result)
    where = ""
    if found_step is not None:
        where = f" at step {found_step[0]} {found_step[1].step_id!r} (tab {found_step[1].tab})"
    elif result.failing_step:
        where = f" at {result.failing_step!r}"
    lines = [
        f"iteration {result.iteration} of {total} NOT verified ({result.state}): {code}{where}"
    ]
    expectation = expectation_of(found_step[1]) if found_step else None
    if expectation is not None:
        lines.append(f"  expected: {expectation.expected}")
        lines.append(f"  found:    {expectation.found or '(not shown: see the reason)'}")
    error = found_step[1].error if found_step else None
    if result.reason and (error is None or result.reason != error.get("message")):
        lines.append(f"  reason:   {result.reason}")
    return lines


def _screenshot_lines(artifacts: Path | None, number: int) -> list[str]:
    if artifacts is None:
        return []
    found = sorted(artifacts.glob(f"iteration-{number:04d}-*.png"))
    found += sorted(artifacts.glob(f"iteration-{number:04d}-trace.zip"))
    return [f"  file:     {path}" for path in found]


def not_started(requested: int, results: Sequence[IterationResult]) -> list[int]:
    """Iterations of a new run that never began (after a stop at an unverified one)."""
    begun = {result.iteration for result in results}
    return [number for number in range(1, requested + 1) if number not in begun]


def _not_started_line(numbers: Sequence[int], total: int) -> list[str]:
    if not numbers:
        return []
    shown = ", ".join(str(n) for n in numbers[:10]) + (", ..." if len(numbers) > 10 else "")
    return [f"not started: {len(numbers)} of {total} iterations ({shown})"]


def next_command(run_id: str, status: str) -> str | None:
    """The command a person runs next; a blocked run must be reconciled before anything."""
    if status == "blocked":
        return (
            f"next: northstar reconcile {run_id}  (finds out whether the submission happened;"
            f" then northstar resume {run_id})"
        )
    if status == "verified":
        return None
    return f"details: northstar show {run_id}  (or northstar report {run_id} for a page)"


def summary_lines(outcome: RunOutcome) -> list[str]:
    """Every line after the run for an outcome that is not all verified; none otherwise."""
    total = outcome.summary.requested
    lines: list[str] = []
    for result in outcome.results:
        if result.state is not IterationState.VERIFIED:
            lines.extend(failure_lines(result, total))
            lines.extend(_screenshot_lines(outcome.artifacts, result.iteration))
    unstarted = outcome.not_started
    if unstarted is None:  # an outcome that kept every result (a program's)
        unstarted = tuple(not_started(total, outcome.results))
    lines.extend(_not_started_line(unstarted, total))
    command = next_command(outcome.run_id, outcome.status)
    return lines + ([command] if command else [])


def print_summary(outcome: RunOutcome, *, echo: Callable[[str], None]) -> None:
    """The summary for ``northstar run`` (text mode only)."""
    for line in summary_lines(outcome):
        echo(line)
