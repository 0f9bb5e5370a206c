"""Debugging aids on Playwright: pauses in the Inspector, traces, screenshots.

Each is an ``IterationHooks`` (see ``northstar.browser.hooks``) that the host builds
from its options for a run, or a test builds directly:

- ``PauseHooks`` pause before each step (``--step``) and/or at a failure
  (``--pause-on-failure``). The pause itself is injected: by default
  ``inspector_pause`` (``page.pause()``: Playwright's Inspector, headed only); a test
  passes a function that records the call and returns, which resumes the run.
- ``TraceHooks`` record a Playwright trace per iteration (``iteration-NNNN-trace.zip``,
  opened with ``playwright show-trace``); ``retain-on-failure`` keeps only those of
  iterations that were not verified. A trace holds what was typed, secret values too.
- ``ScreenshotHooks`` save PNGs of every open tab role at a failure, or also at the end
  of a verified iteration (pytest-playwright's ``--screenshot`` modes).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Literal

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
ScreenshotMode = Literal["off", "on", "only-on-failure"]


def _playwright(session: BrowserSession) -> PlaywrightSession:
    if not isinstance(session, PlaywrightSession):
        raise TypeError(f"debugging hooks need a PlaywrightSession, not {type(session).__name__}")
    return session


async def inspector_pause(page: Page, point: PausePoint) -> None:
    """Wait in Playwright's Inspector until the person presses Resume (headed browsers)."""
    log.warning("paused", at=point.describe(), resume="press Resume in the Playwright Inspector")
    await page.pause()


class PauseHooks(NoHooks):
    """Pause before each step and/or at the failing step, on that step's tab."""

    def __init__(
        self, *, step: bool = False, on_failure: bool = False, pause: Pause = inspector_pause
    ) -> None:
        self.step = step
        self.on_failure = on_failure
        self.pause = pause

    async def before_step(self, session: BrowserSession, plan: Plan, step: BoundStep) -> None:
        if self.step:
            await self._pause_on(session, PausePoint("step", plan.iteration, step.id, step.tab))

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
        failed = True
        try:
            yield
            failed = False
        finally:
            await self._stop(adapter.watch, tracing, plan, failed=failed)

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
            log.info("trace_saved", path=str(path), show=f"playwright show-trace {path}")


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
