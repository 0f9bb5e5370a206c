"""Debugging aids on Playwright: pauses in the Inspector, traces, screenshots.

Each is an ``IterationHooks`` (see ``northstar.browser.hooks``) that the host builds
from its options for a run, or a test builds directly:

- ``PauseHooks`` pause before each step (``--step``), before the steps named by
  ``--break-at``, and/or at a failure (``--pause-on-failure``). Before a step they first
  show it on the terminal (id, kind, what it acts on, the recipe file and line), since
  the Inspector shows Northstar's Python, not the recipe. The pause itself is injected:
  by default ``inspector_pause`` (``page.pause()``: Playwright's Inspector, headed only);
  a test passes a function that records the call and returns, which resumes the run.
- ``TraceHooks`` record a Playwright trace per iteration (``iteration-NNNN-trace.zip``,
  opened with ``playwright show-trace``), each recipe step a group of actions
  (``tracing.group``) that points at the step's line in the recipe;
  ``retain-on-failure`` keeps only those of iterations that were not verified. A trace
  holds what was typed, secret values too.
- ``ScreenshotHooks`` save PNGs of every open tab role at a failure, or also at the end
  of a verified iteration (pytest-playwright's ``--screenshot`` modes).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Literal, TypedDict

import structlog
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from playwright.async_api._generated import Tracing  # not re-exported by the package

from browser_adapters.browser_watch import BrowserWatch
from browser_adapters.session import PlaywrightSession
from northstar.browser import BrowserSession
from northstar.browser.hooks import NoHooks
from northstar.browser.settings import (
    PausePoint,
    TraceMode,
    pause_tab,
    show_trace_command,
    step_pause_point,
    trace_file_name,
    trace_kept,
)
from northstar.errors import NorthstarError
from northstar.plan.model import BoundStep, Plan
from northstar.redaction import redact
from northstar.results import StepResult

__all__ = [
    "Pause",
    "PauseHooks",
    "ScreenshotHooks",
    "ScreenshotMode",
    "TraceHooks",
    "inspector_pause",
]

log = structlog.get_logger("northstar.debugging")

Pause = Callable[[Page, PausePoint], Awaitable[None]]
Show = Callable[[str], None]  # where a person reads what a pause is about


class Location(TypedDict, total=False):
    """Where a trace group points (the shape of Playwright's own, which it does not export)."""

    file: str
    line: int | None
    column: int | None


ScreenshotMode = Literal["off", "on", "only-on-failure"]


def _playwright(session: BrowserSession) -> PlaywrightSession:
    if not isinstance(session, PlaywrightSession):
        raise TypeError(f"debugging hooks need a PlaywrightSession, not {type(session).__name__}")
    return session


def to_terminal(text: str) -> None:
    """Write ``text`` to stderr at once: the person at the terminal reads it before the pause."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


async def inspector_pause(page: Page, point: PausePoint) -> None:
    """Wait in Playwright's Inspector until the person presses Resume (headed browsers)."""
    log.warning(
        "paused",
        at=point.describe(),
        recipe=point.source or None,  # the recipe's line: the Inspector shows our Python
        resume="press Resume in the Playwright Inspector",
    )
    await page.pause()


class PauseHooks(NoHooks):
    """Pause before each step and/or at the failing step, on that step's tab."""

    def __init__(
        self,
        *,
        step: bool = False,
        on_failure: bool = False,
        break_at: tuple[str, ...] = (),
        pause: Pause = inspector_pause,
        show: Show = to_terminal,
    ) -> None:
        self.step = step
        self.on_failure = on_failure
        self.break_at = break_at
        self.pause = pause
        self.show = show

    async def before_step(self, session: BrowserSession, plan: Plan, step: BoundStep) -> None:
        if self.step or step.id in self.break_at:
            point = step_pause_point(plan, step)
            self.show(point.banner())
            await self._pause_on(session, point)

    async def at_failure(self, session: BrowserSession, plan: Plan, failed: StepResult) -> None:
        if not self.on_failure:
            return
        error = failed.error or {}
        message = redact(f"{error.get('code', '?')}: {error.get('message', '')}", plan.secrets)
        point = PausePoint("failure", plan.iteration, failed.step_id, failed.tab, message)
        await self._pause_on(session, point)

    async def _pause_on(self, session: BrowserSession, point: PausePoint) -> None:
        pages = _playwright(session).pages()
        tab = pause_tab(point.tab, pages)
        if tab is None:
            return  # no page is open, so there is nothing to look at
        await self.pause(pages[tab], replace(point, tab=tab))


class TraceHooks(NoHooks):
    """A Playwright trace per iteration, saved in ``folder`` when ``mode`` keeps it."""

    def __init__(self, mode: TraceMode, folder: Path) -> None:
        self.mode = mode
        self.folder = folder

    @asynccontextmanager
    async def around(self, session: BrowserSession, plan: Plan) -> AsyncIterator[None]:
        adapter = _playwright(session)
        tracing = adapter.context.tracing
        title = f"{plan.recipe_name} iteration {plan.iteration}"
        start = tracing.start(screenshots=True, snapshots=True, title=title)
        await adapter.watch.call(start, what="start a trace")
        self._grouped = False
        adapter.trace_internal_reads = True
        failed = True
        try:
            yield
            failed = False
        finally:
            adapter.trace_internal_reads = False
            with suppress(PlaywrightError, NorthstarError):  # a browser that went away
                await self._end_group(adapter)
            await self._stop(adapter.watch, tracing, plan, failed=failed)

    async def before_step(self, session: BrowserSession, plan: Plan, step: BoundStep) -> None:
        """Open the step's group: the trace viewer lists the recipe's steps, not our calls."""
        adapter = _playwright(session)
        await self._end_group(adapter)
        name = f"{step.id} ({step.kind})"
        location = trace_location(plan, step)
        await adapter.watch.call(
            adapter.context.tracing.group(name, location=location), what="group a trace"
        )
        self._grouped = True

    async def after_step(
        self, session: BrowserSession, plan: Plan, step: BoundStep, result: StepResult
    ) -> None:
        await self._end_group(_playwright(session))

    async def at_failure(self, session: BrowserSession, plan: Plan, failed: StepResult) -> None:
        await self._end_group(_playwright(session))

    async def _end_group(self, adapter: PlaywrightSession) -> None:
        if self._grouped:
            self._grouped = False
            await adapter.watch.call(adapter.context.tracing.group_end(), what="group a trace")

    async def _stop(
        self, watch: BrowserWatch, tracing: Tracing, plan: Plan, *, failed: bool
    ) -> None:
        # A browser that went away took the trace with it.
        with suppress(PlaywrightError, NorthstarError):
            if not trace_kept(self.mode, failed=failed):
                await watch.call(tracing.stop(), what="stop a trace")
                return
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / trace_file_name(plan.iteration)
            await watch.call(tracing.stop(path=path), what="save a trace")
            log.info("trace_saved", path=str(path), show=show_trace_command(path))


def trace_location(plan: Plan, step: BoundStep) -> Location | None:
    """The recipe file and line a step group points at (``None`` for a recipe from text)."""
    if not plan.recipe_file or plan.recipe_file.startswith("<"):
        return None
    location: Location = {"file": str(Path(plan.recipe_file).resolve())}
    if step.line:
        location["line"] = step.line
    return location


class ScreenshotHooks(NoHooks):
    """PNGs of every open tab role: at a failure, and with ``on`` also when verified."""

    def __init__(self, mode: ScreenshotMode, folder: Path) -> None:
        self.mode = mode
        self.folder = folder

    @asynccontextmanager
    async def around(self, session: BrowserSession, plan: Plan) -> AsyncIterator[None]:
        yield
        if self.mode == "on":
            await self._save(session, plan, "final")

    async def at_failure(self, session: BrowserSession, plan: Plan, failed: StepResult) -> None:
        if self.mode != "off":
            await self._save(session, plan, "failure")

    async def _save(self, session: BrowserSession, plan: Plan, moment: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        for role, page in _playwright(session).pages().items():
            with suppress(PlaywrightError):  # a tab that cannot be pictured hides nothing
                png = await page.screenshot(timeout=5000)
                (self.folder / f"iteration-{plan.iteration:04d}-{moment}-{role}.png").write_bytes(
                    png
                )
