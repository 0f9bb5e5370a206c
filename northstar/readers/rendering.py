"""The journal views rendered as compact human text, one line per step.

Kept apart from the queries so the text can change without touching how the journal is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol

from northstar.browser.settings import show_trace_command
from northstar.readers.artifacts import ArtifactFiles
from northstar.readers.liveness import INTERRUPTED
from northstar.readers.views import IterationView, RunDetail, RunSummary, StepView
from northstar.recipe.model import RetryPolicy
from northstar.results import ACTED_ON

__all__ = [
    "file_lines",
    "header_lines",
    "iteration_lines",
    "probe_line",
    "probe_lines",
    "render_run",
    "render_runs",
    "row_text",
]

# Shown next to a step only when it differs or was needed: the default is in the docs.
_DEFAULT_RETRY = RetryPolicy().model_dump()


def render_runs(runs: Sequence[RunSummary]) -> str:
    """The table for ``northstar runs``."""
    if not runs:
        return "no runs in the journal"
    lines = [f"{'RUN':<15} {'STATUS':<13} {'VERIFIED':<9} {'STARTED':<19}  RECIPE"]
    for run in runs:
        done = f"{run.iterations_verified}/{run.total_iterations}"
        lines.append(
            f"{run.run_id:<15} {run.effective_status:<13} {done:<9} "
            f"{_short_time(run.started_at):<19}  {run.recipe_name}"
        )
    return "\n".join(lines)


def render_run(detail: RunDetail, artifacts: Path | None = None) -> str:
    """The text for ``northstar show`` (and each refresh of ``watch``).

    With ``artifacts`` (the run's folder), each iteration that is not verified names its
    failure screenshots and trace, so a person can open them without looking for them.
    """
    lines = header_lines(detail)
    lines.extend(iteration_lines(detail.iterations, artifacts))
    if detail.omitted_iterations:
        lines.append(
            f"  ... {detail.omitted_iterations} more verified iterations not shown "
            "(northstar show RUN_ID --all pages through every iteration)"
        )
    return "\n".join(lines)


def iteration_lines(iterations: Sequence[IterationView], artifacts: Path | None) -> list[str]:
    """Each iteration's line, its steps and outputs (and files of a failure), as text lines."""
    lines: list[str] = []
    listing = None if artifacts is None else ArtifactFiles(artifacts)
    for iteration in iterations:
        lines.append(_iteration_line(iteration))
        if iteration.row:
            lines.append(f"    row: {_clip(row_text(iteration.row), 160)}")
        lines.extend(_step_line(step) for step in iteration.steps)
        if iteration.outputs:
            pairs = ", ".join(f"{k}={_clip(v, 60)}" for k, v in iteration.outputs.items())
            lines.append(f"    outputs: {pairs}")
        if listing is not None and iteration.effective_state != "verified":
            lines.extend(file_lines(listing, iteration.number))
    return lines


def file_lines(artifacts: Path | ArtifactFiles, number: int) -> list[str]:
    """An iteration's screenshots and trace as lines (absolute paths), with the trace command."""
    listing = artifacts if isinstance(artifacts, ArtifactFiles) else ArtifactFiles(artifacts)
    files = listing.of(number)
    lines = [f"    screenshot: {path}" for path in files.screenshots]
    if files.trace is not None:
        lines.append(f"    trace: {files.trace}  ({show_trace_command(files.trace)})")
    return lines


def header_lines(detail: RunDetail) -> list[str]:
    run = detail.summary
    status = run.effective_status
    if status == INTERRUPTED:
        status += f" (worker {run.worker_pid} exited without recording an end)"
    ended = f"  ended {_short_time(run.ended_at)}" if run.ended_at else ""
    return [
        f"run {run.run_id}  {run.recipe_name}  {status}  "
        f"{run.iterations_verified}/{run.total_iterations} verified",
        f"  recipe {run.recipe_path}  project {run.project}  profile {run.profile}  "
        f"definition {detail.definition_hash[:12]}",
        f"  started {_short_time(run.started_at)}{ended}",
        *probe_lines(detail),
    ]


class ProbeControlFacts(Protocol):
    """What a probe line needs of a positive control (the journal's or a reader's view)."""

    @property
    def proven(self) -> bool: ...
    @property
    def checked_at(self) -> str: ...
    @property
    def detail(self) -> str: ...


def probe_lines(detail: RunDetail) -> list[str]:
    """Whether each reconcile probe is proven (has found a known effect): only a proven
    probe can prove a submission absent."""
    return [probe_line(c.step_id, c) for c in detail.probe_controls]


def probe_line(step_id: str, control: ProbeControlFacts | None) -> str:
    """One probe's state: proven, blind (and what it saw), or never controlled."""
    if control is None:
        return f"  probe of {step_id}: never controlled: it cannot prove a submission absent yet"
    if control.proven:
        return f"  probe of {step_id}: proven {_short_time(control.checked_at)}"
    return f"  probe of {step_id}: BLIND (cannot prove absence): {_clip(control.detail, 160)}"


def _iteration_line(iteration: IterationView) -> str:
    calls = "-" if iteration.model_calls is None else str(iteration.model_calls)
    line = (
        f"  iteration {iteration.number}  {iteration.effective_state}  "
        f"{_ms(iteration.duration_ms)}  evidence {iteration.evidence_count}  model calls {calls}"
    )
    if iteration.reason_code:
        where = f" at step {iteration.failing_step!r}" if iteration.failing_step else ""
        line += f"\n    {iteration.reason_code}{where}: {iteration.reason or ''}"
    return line


def _step_line(step: StepView) -> str:
    line = (
        f"    {step.seq + 1:>2} {step.step_id:<20} {step.tab:<10} {step.kind:<12} "
        f"{step.effective_status:<11} {_ms(step.duration_ms):>9}  {len(step.evidence)} evidence"
    )
    if step.attempts and step.attempts > 1:
        line += f"  {step.attempts} attempts"
    if step.retry and (step.retry != _DEFAULT_RETRY or (step.attempts or 1) > 1):
        retry = step.retry
        line += (
            f"  [retry: {retry.get('attempts')} attempts in {retry.get('max_seconds'):g} s"
            f" on {','.join(retry.get('on', []))}]"
        )
    if step.error:
        line += f"  {step.error.get('code', '?')}: {_clip(str(step.error.get('message', '')), 80)}"
    for evidence in step.evidence:
        if evidence.get("kind") == ACTED_ON:
            line += f"\n         acted on: {_clip(str(evidence.get('found', '')), 160)}"
    return line


def _short_time(stamp: str | None) -> str:
    if not stamp:
        return "-"
    try:
        return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return stamp


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def row_text(row: dict[str, str]) -> str:
    """An iteration's values as ``name=value, ...`` in the recipe's order (secrets redacted)."""
    return ", ".join(f"{name}={value}" for name, value in row.items())
