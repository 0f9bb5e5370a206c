"""Watching a recipe run: pauses before steps or at a failure, and Playwright traces.

These are a person's debugging aids, asked for with ``--step``, ``--pause-on-failure``
and ``--trace``. The settings and the decisions (where to pause, whether a trace is kept,
what its file is called) are plain data and functions here; the Playwright adapter does
the pausing and the tracing (``browser_adapters.debugging``).

A pause waits for a person in Playwright's Inspector (``page.pause()``, headed only). It
is injected as a callable so that tests, or another front end, can stand in for the
person: the callable receives the page and a ``PausePoint`` and returns to resume.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "TRACE_MODES",
    "DebugSettings",
    "PausePoint",
    "TraceMode",
    "pause_tab",
    "trace_file_name",
    "trace_kept",
]

TraceMode = Literal["off", "on", "retain-on-failure"]
TRACE_MODES: tuple[TraceMode, ...] = ("off", "on", "retain-on-failure")


@dataclass(frozen=True)
class DebugSettings:
    """What a person asked for to watch a run; all off by default."""

    step: bool = False  # pause before each step
    pause_on_failure: bool = False  # pause at the failing step, pages still open
    trace: TraceMode = "off"

    @property
    def pauses(self) -> bool:
        """Whether a person is expected at the keyboard (so the browser should be headed)."""
        return self.step or self.pause_on_failure

    @property
    def active(self) -> bool:
        return self.pauses or self.trace != "off"


@dataclass(frozen=True)
class PausePoint:
    """Where a run paused: before a step, or at the step that failed."""

    reason: Literal["step", "failure"]
    iteration: int
    step_id: str
    tab: str
    message: str = ""  # the failure's code and message, already free of secret values

    def describe(self) -> str:
        where = f"iteration {self.iteration}, step {self.step_id!r} (tab {self.tab!r})"
        if self.reason == "step":
            return f"paused before {where}"
        return f"paused at the failure of {where}: {self.message}"


def pause_tab(preferred: str, open_tabs: Iterable[str]) -> str | None:
    """The tab to pause on: the step's own if it is open, else the first open one."""
    tabs = list(open_tabs)
    if preferred in tabs:
        return preferred
    return tabs[0] if tabs else None


def trace_kept(mode: TraceMode, *, failed: bool) -> bool:
    """``on`` keeps every trace; ``retain-on-failure`` only those of unverified iterations."""
    return mode == "on" or (mode == "retain-on-failure" and failed)


def trace_file_name(iteration: int) -> str:
    """Beside the run's other artifacts: ``iteration-0003-trace.zip``."""
    return f"iteration-{iteration:04d}-trace.zip"
