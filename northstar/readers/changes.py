"""What changed in a run between two reads of the journal, as lines (``northstar watch``).

Reprinting the whole run on every change buries the one line that is new under all the
others. ``change_lines`` compares two views and names only what is new or different: the
run's status, an iteration that appeared or changed state, a step that appeared or
changed status. It is a pure function of the two views, tested without a clock or a run.
"""

from __future__ import annotations

from collections.abc import Iterator

from northstar.readers.views import IterationView, RunDetail, StepView

__all__ = ["change_lines"]


def change_lines(before: RunDetail | None, after: RunDetail) -> list[str]:
    """The lines that tell a reader of ``before`` what ``after`` adds; all of it at first."""
    lines = list(_run_change(before, after))
    earlier = {it.number: it for it in before.iterations} if before else {}
    for iteration in sorted(after.iterations, key=lambda it: it.number):
        lines.extend(_iteration_changes(earlier.get(iteration.number), iteration))
    return lines


def _verified_text(detail: RunDetail) -> str:
    run = detail.summary
    return f"{run.iterations_verified}/{run.total_iterations} verified"


def _run_change(before: RunDetail | None, after: RunDetail) -> Iterator[str]:
    if before is None:
        yield (
            f"run {after.run_id}  {after.summary.recipe_name}  {after.effective_status}  "
            f"{_verified_text(after)}"
        )
    elif before.effective_status != after.effective_status:
        yield (
            f"run {after.run_id}: {before.effective_status} -> {after.effective_status}, "
            f"{_verified_text(after)}"
        )


def _iteration_changes(before: IterationView | None, after: IterationView) -> Iterator[str]:
    if before is None or before.effective_state != after.effective_state:
        yield _iteration_line(before, after)
    earlier = {step.seq: step for step in before.steps} if before else {}
    for step in after.steps:
        previous = earlier.get(step.seq)
        if previous is None or previous.effective_status != step.effective_status:
            yield _step_line(after.number, step)


def _iteration_line(before: IterationView | None, after: IterationView) -> str:
    was = f"{before.effective_state} -> " if before else ""
    line = f"iteration {after.number}: {was}{after.effective_state}"
    if after.duration_ms is not None and after.effective_state != "running":
        line += f" in {after.duration_ms / 1000:.2f} s"
    if after.reason_code:
        where = f" at step {after.failing_step!r}" if after.failing_step else ""
        line += f"  {after.reason_code}{where}: {after.reason or ''}"
    return line


def _step_line(number: int, step: StepView) -> str:
    where = f"iteration {number} step {step.seq + 1} {step.step_id} [{step.tab}]"
    line = f"  {where}: {step.effective_status}"
    if step.duration_ms is not None and step.effective_status != "running":
        line += f" in {step.duration_ms:.0f} ms"
    if step.error:
        line += f"  {step.error.get('code', '?')}: {step.error.get('message', '')}"
    return line
