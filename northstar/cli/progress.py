"""Progress of a multi-iteration run: a live line in a terminal, plain lines otherwise.

The run feeds it twice: at each step of an iteration (through ``ProgressHooks``, an
``IterationHooks`` the runner calls before and after every step) and at each finished
iteration (``Progress.update``). What is shown is computed by ``progress_line``, a pure
function of the counts, the steps in progress and the elapsed time, so the text is tested
without a run or a clock. Without a terminal (a log file, CI), it prints one plain line
per finished iteration and never rewrites a line.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TextIO

from northstar.browser.hooks import NoHooks
from northstar.plan.model import BoundStep, Plan
from northstar.results import IterationResult

__all__ = ["Progress", "ProgressHooks", "RunningStep", "clock_text", "progress_line", "rate_text"]


@dataclass(frozen=True, slots=True)
class RunningStep:
    """The step an iteration is at: its place in the plan and its id."""

    number: int
    of: int
    step_id: str


def clock_text(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def rate_text(done: int, elapsed: float) -> str:
    """Iterations per second, or per minute when fewer than one a second finishes."""
    if not done or elapsed <= 0:
        return "-"
    per_second = done / elapsed
    return f"{per_second:.1f}/s" if per_second >= 1 else f"{per_second * 60:.1f}/min"


def _running_text(running: Mapping[int, RunningStep]) -> str:
    if not running:
        return ""
    number = min(running)
    step = running[number]
    more = f" (+{len(running) - 1} running)" if len(running) > 1 else ""
    return f" | iteration {number} step {step.number}/{step.of} {step.step_id}{more}"


def progress_line(
    *,
    total: int,
    verified: int,
    failed: int,
    running: Mapping[int, RunningStep],
    elapsed: float,
) -> str:
    """The live line: done/total, verdicts, the step in progress, rate and estimate."""
    done = verified + failed
    left = (elapsed / done) * (total - done) if done else None
    estimate = f"left ~{clock_text(left)}" if left is not None else "left ?"
    return (
        f"[{done}/{total}] verified {verified}, not verified {failed}"
        f"{_running_text(running)} | {rate_text(done, elapsed)}, "
        f"elapsed {clock_text(elapsed)}, {estimate}"
    )


class Progress:
    """Done/total, verified/failed, the step in progress, rate and an estimate of time left."""

    def __init__(
        self,
        total: int,
        stream: TextIO,
        *,
        live: bool,
        monotonic: Callable[[], float] = time.monotonic,
        width: int | None = None,
    ) -> None:
        self.total = total
        self.stream = stream
        self.live = live
        # A live line longer than the terminal wraps, and "\r" then rewrites only its end.
        self.width = width or shutil.get_terminal_size().columns
        self._monotonic = monotonic
        self._started = monotonic()
        self.verified = 0
        self.failed = 0
        self.running: dict[int, RunningStep] = {}

    def line(self) -> str:
        return progress_line(
            total=self.total,
            verified=self.verified,
            failed=self.failed,
            running=self.running,
            elapsed=self._monotonic() - self._started,
        )

    def step_started(self, iteration: int, step: RunningStep) -> None:
        """An iteration reached a step: the live line shows it; plain lines wait for the end."""
        self.running[iteration] = step
        if self.live:
            self._redraw()

    def update(self, result: IterationResult) -> None:
        """Count one finished iteration and show it."""
        self.running.pop(result.iteration, None)
        if result.verified:
            self.verified += 1
        else:
            self.failed += 1
        if self.live:
            self._redraw()
            return
        verdict = "verified" if result.verified else f"{result.state} ({result.reason_code})"
        done = self.verified + self.failed
        elapsed = self._monotonic() - self._started
        left = (elapsed / done) * (self.total - done)
        self.stream.write(
            f"iteration {result.iteration}/{self.total}: {verdict} "
            f"in {result.duration_ms / 1000:.2f} s | {rate_text(done, elapsed)}, "
            f"left ~{clock_text(left)}\n"
        )
        self.stream.flush()

    def _redraw(self) -> None:
        self.stream.write("\r\x1b[2K" + self.line()[: max(self.width - 1, 20)])
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()


class ProgressHooks(NoHooks):
    """The runner's step events, handed to a ``Progress`` (it never affects a verdict)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    async def before_step(self, session: object, plan: Plan, step: BoundStep) -> None:
        ids = [bound.id for bound in plan.steps]
        number = ids.index(step.id) + 1 if step.id in ids else len(ids)
        self.progress.step_started(plan.iteration, RunningStep(number, len(ids), step.id))
