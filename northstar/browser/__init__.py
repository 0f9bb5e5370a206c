"""The browser side's ports: what the core asks of a browser, and how one is launched.

``protocol`` is the contract a browser adapter implements (``BrowserHost`` hands out one
``BrowserSession`` per iteration); ``settings`` says how to launch or reach a browser;
``hooks`` are the extension points around an iteration (pauses, traces, snapshots).
``browser_adapters`` implements them on Playwright and imports from here, never from the
run engine, so the adapter stands below the engine. This package imports only the plan,
the recipe language and the shared modules.

Names are imported on first use, so reading the launch settings does not load the plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from northstar._lazy import lazy_exports

if TYPE_CHECKING:
    from northstar.browser.protocol import (
        BrowserHost,
        BrowserSession,
        Reading,
        ReadSource,
        SendTrace,
    )

__all__ = ["BrowserHost", "BrowserSession", "ReadSource", "Reading", "SendTrace"]

_HOMES = {name: "northstar.browser.protocol" for name in __all__}

__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())
