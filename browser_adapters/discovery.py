"""Find a Chromium to drive: an explicit path wins, then Playwright's own, then the system's.

Playwright's browser download is impossible on some machines (no network, distribution
policy); the distribution's Chromium works just as well, so both are looked for.

Headless runs prefer a *headless shell* (Chromium's lean headless build, Debian's
``chromium-headless-shell``), as Playwright itself does for its own builds: the full
browser in headless mode spends several times the CPU per page (measured on a 2-core
machine: a fresh context, page and local page load cost 283 ms of browser-process CPU
with the full browser and 57 ms with the shell). A headed run needs a window, so it
looks for the full browser only.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from northstar.errors import BrowserNotFound

__all__ = ["BROWSER_ENV", "HEADLESS_SHELLS", "SYSTEM_BROWSERS", "find_browser"]

BROWSER_ENV = "NORTHSTAR_BROWSER"
HEADLESS_SHELLS = ("chromium-headless-shell", "chrome-headless-shell")
SYSTEM_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser(
    explicit: str | None = None,
    *,
    headless: bool = True,
    playwright_build: str | None = None,
    environ: dict[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> str | None:
    """The executable to launch, or ``None`` for Playwright's own build.

    Precedence: ``explicit`` (``--browser``), then ``$NORTHSTAR_BROWSER``, then
    Playwright's downloaded Chromium (``playwright_build`` if that file exists; Playwright
    then picks its own headless shell for a headless launch), then, on ``PATH``, the
    first of ``HEADLESS_SHELLS`` (headless runs only) and of ``SYSTEM_BROWSERS``. An
    explicit path that does not exist is an error rather than a silent fall-through: the
    person asked for that browser.
    """
    env = os.environ if environ is None else environ
    for source, candidate in (("--browser", explicit), (BROWSER_ENV, env.get(BROWSER_ENV))):
        if candidate:
            return _checked(candidate, source)
    if playwright_build and Path(playwright_build).is_file():
        return None
    names = (*HEADLESS_SHELLS, *SYSTEM_BROWSERS) if headless else SYSTEM_BROWSERS
    for name in names:
        found = which(name)
        if found:
            return found
    kind = "headless shell or Chromium" if headless else "Chromium"
    raise BrowserNotFound(f"no {kind} found (Playwright's own build or the system's)")


def _checked(candidate: str, source: str) -> str:
    path = shutil.which(candidate) or candidate
    if not Path(path).is_file() or not os.access(path, os.X_OK):
        raise BrowserNotFound(
            f"the browser given by {source} is not an executable file: {candidate}",
            fix=f"Correct {source} or unset it to let Northstar find Chromium.",
        )
    return path
