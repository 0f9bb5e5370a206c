"""The Playwright implementation of Northstar's browser protocol (async API only).

Names are imported on first use (PEP 562), so ``browser_adapters.early_driver`` can be
loaded at the very start of ``northstar run`` without loading the core it adapts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from northstar._lazy import lazy_exports

if TYPE_CHECKING:
    from browser_adapters.discovery import find_browser
    from browser_adapters.host import PlaywrightHost
    from browser_adapters.session import PlaywrightSession

_HOMES = {
    "PlaywrightHost": "browser_adapters.host",
    "PlaywrightSession": "browser_adapters.session",
    "find_browser": "browser_adapters.discovery",
}

__all__ = ["PlaywrightHost", "PlaywrightSession", "find_browser"]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())
