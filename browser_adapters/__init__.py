"""The Playwright implementation of Northstar's browser protocol (async API only)."""

from browser_adapters.discovery import find_browser
from browser_adapters.host import BrowserOptions, PlaywrightHost
from browser_adapters.session import PlaywrightSession

__all__ = ["BrowserOptions", "PlaywrightHost", "PlaywrightSession", "find_browser"]
