"""The page as it was after each step, saved as HTML beside a recorded regression case.

When a replay later fails, the person compares the page it found with what the page
looked like at recording, step by step (``step-03-send.html``). Secret values are
replaced in the saved HTML; a snapshot is for reading, never replayed.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from playwright.async_api import Error as PlaywrightError

from browser_adapters.session import PlaywrightSession
from northstar.browser import BrowserSession
from northstar.browser.hooks import NoHooks
from northstar.plan.model import BoundStep, Plan
from northstar.redaction import redact
from northstar.results import StepResult

__all__ = ["DomSnapshots"]


class DomSnapshots(NoHooks):
    """After each passing step, ``page.content()`` of the step's tab into ``folder``.

    ``file_name(index, step_id)`` names each file: the recorded case's manifest owns that.
    """

    def __init__(self, folder: Path, file_name: Callable[[int, str], str]) -> None:
        self.folder = folder
        self._file_name = file_name
        self.saved: dict[str, str] = {}  # step id -> file name

    async def after_step(
        self, session: BrowserSession, plan: Plan, step: BoundStep, result: StepResult
    ) -> None:
        assert isinstance(session, PlaywrightSession)
        page = session.pages().get(step.tab)
        if page is None:
            return  # the step closed its own tab: there is no page to keep
        with suppress(PlaywrightError):  # a page navigating away mid-read has no stable DOM
            html = redact(await page.content(), plan.secrets)
            name = self._file_name(step.index, step.id)
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / name).write_text(html, encoding="utf-8")
            self.saved[step.id] = name
