"""Find a Chromium to drive: an explicit path wins, then Playwright's own, then the system's.

Playwright's browser download is impossible on some machines (no network, distribution
policy); the distribution's Chromium works just as well, so both are looked for.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from northstar.errors import BrowserNotFound

__all__ = ["BROWSER_ENV", "SYSTEM_BROWSERS", "find_browser"]

BROWSER_ENV = "NORTHSTAR_BROWSER"
SYSTEM_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser(
    explicit: str | None = None,
    *,
    playwright_build: str | None = None,
    environ: dict[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> str | None:
    """The executable to launch, or ``None`` for Playwright's own build.

    Precedence: ``explicit`` (``--browser``), then ``$NORTHSTAR_BROWSER``, then
    Playwright's downloaded Chromium (``playwright_build`` if that file exists), then the
    first of ``SYSTEM_BROWSERS`` on ``PATH``. An explicit path that does not exist is an
    error rather than a silent fall-through: the person asked for that browser.
    """
    env = os.environ if environ is None else environ
    for source, candidate in (("--browser", explicit), (BROWSER_ENV, env.get(BROWSER_ENV))):
        if candidate:
            return _checked(candidate, source)
    if playwright_build and Path(playwright_build).is_file():
        return None
    for name in SYSTEM_BROWSERS:
        found = which(name)
        if found:
            return found
    raise BrowserNotFound("no Chromium found (Playwright's own build or the system's)")


def _checked(candidate: str, source: str) -> str:
    path = shutil.which(candidate) or candidate
    if not Path(path).is_file() or not os.access(path, os.X_OK):
        raise BrowserNotFound(
            f"the browser given by {source} is not an executable file: {candidate}",
            fix=f"Correct {source} or unset it to let Northstar find Chromium.",
        )
    return path
