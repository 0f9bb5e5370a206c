"""A run's ending as a person reads it: the last lines of ``run``, ``resume`` and ``show``.

Pure functions over a ``RunEnding`` (``northstar.readers.endings``), so the words are
tested without a browser and every command prints the same ones. Every line is passed
through ``printable``: a page's text or a file name cannot rewrite the terminal.
``endings_table`` is the documentation's table of endings, made from the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from northstar.errors import printable
from northstar.readers.endings import ENDINGS, Ending, RunEnding, StopReason

__all__ = ["ending_lines", "endings_table", "reason_lines"]


def ending_lines(ending: RunEnding) -> list[str]:
    """The headline, why it stopped, what never started, and the next command."""
    lines = [_headline(ending)]
    for reason in ending.reasons:
        lines.extend(reason_lines(reason, ending.total))
    if ending.more_reasons:
        lines.append(
            f"... {ending.more_reasons} more iterations not verified "
            f"(northstar show {ending.run_id} names them)"
        )
    lines.extend(_not_started_lines(ending))
    command = ending.next_command()
    return [printable(line) for line in [*lines, *([command] if command else [])]]


def _headline(ending: RunEnding) -> str:
    line = (
        f"run {ending.run_id}: {ending.status}, {ending.verified} of {ending.total} "
        "iterations verified"
    )
    others = {state: n for state, n in ending.states.items() if state != "verified" and n}
    if others:
        counted = ", ".join(f"{n} {state}" for state, n in others.items())
        line += f" ({ending.recorded} recorded: {ending.verified} verified, {counted})"
    return line


def reason_lines(reason: StopReason, total: int) -> list[str]:
    """One reason: the run's stop, or an iteration with its step, check and files."""
    if reason.state is None:
        return _run_stop_lines(reason)
    where = ""
    if reason.step_number is not None:
        where = f" at step {reason.step_number} {reason.step!r} (tab {reason.tab})"
    elif reason.step:
        where = f" at {reason.step!r}"
    head = f"iteration {reason.iteration} of {total} NOT verified ({reason.state}): {reason.code}"
    if not reason.about_page:  # no page came back: nothing was expected or found on one
        return [f"{head}{where}: {reason.message}", *_file_lines(reason.files)]
    return [f"{head}{where}", *_check_lines(reason), *_file_lines(reason.files)]


def _run_stop_lines(reason: StopReason) -> list[str]:
    before = f" before iteration {reason.iteration}" if reason.iteration else ""
    lines = [f"stopped by {reason.code}{before}: {reason.message}"]
    if reason.path and reason.path not in reason.message:
        lines.append(f"  file:     {reason.path}")
    return lines


def _check_lines(reason: StopReason) -> list[str]:
    lines = []
    if reason.expected is not None:
        lines.append(f"  expected: {reason.expected}")
        lines.append(f"  found:    {reason.found or '(not shown: see the reason)'}")
    if reason.message and not reason.said_by_check and reason.message != reason.expected:
        lines.append(f"  reason:   {reason.message}")
    return lines


def _file_lines(files: Sequence[str]) -> list[str]:
    return [f"  file:     {path}" for path in files]


def _not_started_lines(ending: RunEnding) -> list[str]:
    if not ending.not_started:
        return []
    shown = ", ".join(str(n) for n in ending.first_not_started)
    more = ", ..." if ending.not_started > len(ending.first_not_started) else ""
    return [f"not started: {ending.not_started} of {ending.total} iterations ({shown}{more})"]


def endings_table(table: Sequence[Ending] = ENDINGS) -> str:
    """The Markdown table of every ending: exit status, codes, statuses, what to do."""
    lines = [
        "| ending | exit | codes | run status | what it means | what to do |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in table:
        codes = ", ".join(f"`{code}`" for code in row.codes) or "-"
        statuses = ", ".join(f"`{status}`" for status in row.statuses) or row.run_status
        means = row.title + (f" ({row.note})" if row.note else "")
        lines.append(
            f"| `{row.name}` | {row.exit_code} | {codes} | {statuses} | {means} | {row.act} |"
        )
    return "\n".join(lines) + "\n"
