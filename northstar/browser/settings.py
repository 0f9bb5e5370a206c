"""How the browser is launched, and a person's debugging aids: pauses and traces.

``BrowserSettings`` is the one description of a launch that every front end builds (the
CLI from its options, the pytest plugin, the case recorder) and that the adapter reads
(``browser_adapters.host.PlaywrightHost``); ``executable`` wins over discovery.

The debugging aids are, asked for with ``--step``, ``--pause-on-failure``
and ``--trace``. The settings and the decisions (where to pause, whether a trace is kept,
what its file is called) are plain data and functions here; the Playwright adapter does
the pausing and the tracing (``browser_adapters.debugging``).

A pause waits for a person in Playwright's Inspector (``page.pause()``, headed only). It
is injected as a callable so that tests, or another front end, can stand in for the
person: the callable receives the page and a ``PausePoint`` and returns to resume.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from northstar.errors import UsageInvalid
from northstar.plan.model import BoundStep, Plan
from northstar.recipe.model import Step
from northstar.redaction import redact

__all__ = [
    "TRACE_MODES",
    "BrowserSettings",
    "DebugSettings",
    "PauseFunction",
    "PausePoint",
    "TraceMode",
    "pause_tab",
    "show_trace_command",
    "step_pause_point",
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
    break_at: tuple[str, ...] = ()  # pause before these steps (their recipe ids) only

    @property
    def pauses(self) -> bool:
        """Whether a person is expected at the keyboard (so the browser should be headed)."""
        return self.step or self.pause_on_failure or bool(self.break_at)

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
    kind: str = ""  # the step's kind (``click``...), for a pause before it
    subject: str = ""  # what it acts on or checks, in words (no typed values)
    source: str = ""  # ``recipes/x.yaml:23``: where the step is written

    def describe(self) -> str:
        where = f"iteration {self.iteration}, step {self.step_id!r} (tab {self.tab!r})"
        if self.reason == "step":
            return f"paused before {where}"
        return f"paused at the failure of {where}: {self.message}"

    def banner(self) -> str:
        """The lines a person at the terminal reads before the step runs: what, where."""
        what = " ".join(part for part in (self.kind, self.subject) if part)
        lines = [
            f"paused before step {self.step_id} (iteration {self.iteration}, tab {self.tab})",
            f"  {what}" if what else "",
            f"  at {self.source}" if self.source else "",
            "  resume: press Resume in the Playwright Inspector",
        ]
        return "\n".join(line for line in lines if line)


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


def show_trace_command(path: object) -> str:
    """The command that opens a saved trace, and works with the distribution's Chromium.

    Plain ``playwright show-trace FILE`` opens the viewer in Playwright's own browser
    build, which a machine with only the distribution's Chromium lacks; with ``--host``
    and ``--port`` the viewer is served on loopback and prints its URL for any browser.
    """
    return f"playwright show-trace --host 127.0.0.1 --port 0 {path}"


PauseFunction = Callable[[Any, PausePoint], Awaitable[None]]
"""Waits for a person and returns to resume; receives the adapter's page and the point."""


@dataclass(frozen=True)
class BrowserSettings:
    """How the browser is launched; ``executable`` (``--browser``) wins over discovery.

    With ``cdp_url`` or ``ws_endpoint`` nothing is launched: the host connects to a
    browser someone else runs: ``executable`` and ``headless`` are that browser's business,
    and at the end only the connection is closed, never the browser.
    """

    executable: str | None = None
    headless: bool = True
    slow_mo_ms: float = 0
    storage_state: str | None = None  # --profile: cookies and storage to start from
    extra_args: tuple[str, ...] = field(default=())
    debug: DebugSettings = field(default_factory=DebugSettings)  # --step, --trace, ...
    pause: PauseFunction | None = None  # how a pause waits; default: Playwright's Inspector
    record_har: str | None = None  # record each context's network to this HAR file
    replay_har: str | None = None  # --replay: every request answered from this HAR
    # Reuse a context per lane, reset between iterations, instead of a new one each time.
    context_reset: bool = True
    # Playwright launch options as given (pytest-playwright's ``browser_type_launch_args``):
    # they win over the fields above; their ``args`` come after ``extra_args``.
    launch_options: Mapping[str, Any] = field(default_factory=dict)
    cdp_url: str | None = None  # --cdp-url: a running Chromium's DevTools endpoint
    ws_endpoint: str | None = None  # --ws-endpoint: a Playwright browser server
    # A probe's contexts: only GET and HEAD requests go out (``BrowserHost.read_only``).
    read_only: bool = False

    def __post_init__(self) -> None:
        if self.cdp_url and self.ws_endpoint:
            raise UsageInvalid(
                "--cdp-url and --ws-endpoint name two remote browsers; a run uses one",
                fix="Give either --cdp-url or --ws-endpoint.",
            )

    @property
    def remote(self) -> str | None:
        """The remote browser's address, if the browser is not ours to launch (and kill)."""
        return self.cdp_url or self.ws_endpoint


def step_pause_point(plan: Plan, step: BoundStep) -> PausePoint:
    """The pause before ``step``, with its kind, subject and recipe line; secrets redacted."""
    source = plan.recipe_file + (f":{step.line}" if step.line else "")
    return PausePoint(
        "step",
        plan.iteration,
        step.id,
        step.tab,
        kind=step.kind,
        subject=redact(step_subject(step.step), plan.secrets),
        source=source if plan.recipe_file else "",
    )


def step_subject(step: Step) -> str:
    """What a step acts on or checks, in words: a target, a URL, a check; never a value."""
    body = getattr(step, step.kind)
    if isinstance(body, str):
        return body  # goto's URL
    if step.action_target is not None:
        return step.action_target.describe()
    describe = getattr(body, "describe", None)
    return str(describe()) if callable(describe) else ""
