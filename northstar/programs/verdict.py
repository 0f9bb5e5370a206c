"""Whether a program's iteration is verified: four pieces, none taken on the program's word.

Verified only when all four hold: the program called ``complete()`` (its execution
result), every declared output was given and saved, the declaration's ``done_when``
checks and every ``tab.verify`` the program made held in the browser, and the journal
holds all of it with no submission left open. A process that exits 0 without
``complete()`` is not verified ("no execution result"); one that exits otherwise failed,
or is ``unknown`` while a submission it made may have happened. The reason names every
piece that is missing, and each submission without a result by its step. A program the
host ended for making no call within its time limit failed (``PROGRAM_TIMED_OUT``), or is
``unknown`` with a submission open.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from northstar.results import IterationState

__all__ = [
    "NO_RESULT",
    "TIMED_OUT",
    "IterationEvidence",
    "Verdict",
    "model_calls_line",
    "model_calls_summary",
    "program_verdict",
]

NO_RESULT = "no execution result"
NOT_VERIFIED = "PROGRAM_ITERATION_NOT_VERIFIED"
TIMED_OUT = "PROGRAM_TIMED_OUT"


@dataclass(frozen=True, slots=True)
class IterationEvidence:
    """What the host saw of one iteration (plain data, so the rule is tested alone)."""

    exit_code: int | None  # None: ended by a signal
    completed: bool
    missing_outputs: tuple[str, ...] = ()
    outputs_saved: bool = True
    failed_checks: tuple[str, ...] = ()
    failed_verifications: tuple[str, ...] = ()  # the program's own checks that did not hold
    open_submissions: int = 0
    error_code: str | None = None  # the host could not go on with the iteration (a tab)
    stopped: bool = False  # a stop was asked for (Ctrl-C, SIGTERM) while it ran
    open_steps: tuple[str, ...] = ()  # the open submissions' steps (and why, if known)
    time_limit_s: float | None = None  # set when the host ended a program silent this long


@dataclass(frozen=True, slots=True)
class Verdict:
    state: IterationState
    reason_code: str | None = None
    reason: str | None = None


def _missing(evidence: IterationEvidence) -> list[str]:
    missing = [] if evidence.completed else [NO_RESULT]
    if evidence.missing_outputs:
        missing.append("outputs not given: " + ", ".join(evidence.missing_outputs))
    elif not evidence.outputs_saved:
        missing.append("outputs not saved")
    if evidence.failed_checks:
        missing.append("done_when did not hold: " + "; ".join(evidence.failed_checks))
    if evidence.failed_verifications:
        missing.append("verify did not hold: " + "; ".join(evidence.failed_verifications))
    if evidence.open_submissions:
        steps = f": {'; '.join(evidence.open_steps)}" if evidence.open_steps else ""
        missing.append(
            f"journal: {evidence.open_submissions} submission(s) without a result{steps}"
        )
    return missing


def _exit_words(evidence: IterationEvidence) -> str:
    if evidence.error_code is not None:
        return f"the host could not go on with the iteration ({evidence.error_code})"
    if evidence.time_limit_s is not None:
        return f"the program made no call for {evidence.time_limit_s:g} s and was ended"
    if evidence.exit_code is None:
        return "the program was killed by a signal"
    return f"the program exited with status {evidence.exit_code}"


def _failure_code(evidence: IterationEvidence) -> str | None:
    return TIMED_OUT if evidence.time_limit_s is not None else evidence.error_code


def program_verdict(evidence: IterationEvidence) -> Verdict:
    """The iteration's state, and which of the four pieces was missing."""
    if evidence.stopped and not evidence.open_submissions and _missing(evidence):
        return Verdict(IterationState.STOPPED, "STOPPED", "stopped on request; resume runs it")
    if evidence.exit_code != 0 or evidence.time_limit_s is not None:
        state = IterationState.UNKNOWN if evidence.open_submissions else IterationState.FAILED
        code = "OUTCOME_UNKNOWN" if evidence.open_submissions else _failure_code(evidence)
        reason = _exit_words(evidence)
        missing = _missing(evidence)
        return Verdict(state, code or "PROGRAM_FAILED", f"{reason}; missing: {', '.join(missing)}")
    missing = _missing(evidence)
    if not missing:
        return Verdict(IterationState.VERIFIED)
    if evidence.open_submissions:
        return Verdict(IterationState.UNKNOWN, "OUTCOME_UNKNOWN", "missing: " + ", ".join(missing))
    if evidence.completed and not evidence.missing_outputs and not evidence.outputs_saved:
        return Verdict(IterationState.NEEDS_REVIEW, "OUTPUT_SAVE_FAILED", "outputs not saved")
    return Verdict(IterationState.FAILED, NOT_VERIFIED, "missing: " + ", ".join(missing))


def model_calls_summary(calls: Sequence[int | None]) -> tuple[int, int]:
    """``(sum of the known counts, iterations whose count is unknown)``: none is guessed."""
    return sum(c for c in calls if c is not None), sum(1 for c in calls if c is None)


def model_calls_line(calls: Sequence[int | None]) -> str:
    known, unknown = model_calls_summary(calls)
    line = f"model calls: {known} reported by {len(calls) - unknown} iteration(s)"
    return line + (f", unknown for {unknown}" if unknown else "")
