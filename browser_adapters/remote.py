"""Connecting to a browser that someone else runs: ``--cdp-url`` and ``--ws-endpoint``.

``--cdp-url`` attaches over the Chrome DevTools Protocol to a running Chromium (started
with ``--remote-debugging-port``); ``--ws-endpoint`` attaches to a Playwright browser
server (``playwright run-server``, or ``launchServer`` in Node), which launches a browser
for this connection. Either way the browser is not ours: no process to kill, and the
host's ``close()`` only closes the contexts it made and disconnects.

What was checked against Chromium 156 and Playwright 1.65 (tests/browser/test_remote.py):
the origin gate's browser-level CDP session (``new_browser_cdp_session``) and per-page
sessions work over both connections, so the gate is the same as for a launched browser;
``set_input_files`` sends a local file's contents over the connection, so uploads from
this machine's files work; a dropped connection emits ``disconnected`` like a killed
browser, which the browser watch turns into ``BROWSER_CLOSED``.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit, urlunsplit

from playwright.async_api import Browser, Playwright
from playwright.async_api import Error as PlaywrightError

from northstar.browser.settings import BrowserSettings
from northstar.errors import BrowserUnreachable
from northstar.redaction import redact

__all__ = ["connect_remote", "shown_url", "url_secrets"]

# A remote browser that does not answer in this time is reported, not waited for.
CONNECT_TIMEOUT_MS = 30_000


async def connect_remote(playwright: Playwright, settings: BrowserSettings) -> Browser:
    """The browser at ``settings.cdp_url`` or ``settings.ws_endpoint``, connected."""
    chromium = playwright.chromium
    slow_mo = settings.slow_mo_ms or None
    try:
        if settings.cdp_url:
            return await chromium.connect_over_cdp(
                settings.cdp_url, timeout=CONNECT_TIMEOUT_MS, slow_mo=slow_mo
            )
        assert settings.ws_endpoint is not None
        return await chromium.connect(
            settings.ws_endpoint, timeout=CONNECT_TIMEOUT_MS, slow_mo=slow_mo
        )
    except PlaywrightError as exc:
        option = "--cdp-url" if settings.cdp_url else "--ws-endpoint"
        url = settings.remote or ""
        reason = redact(str(exc).splitlines()[0][:200], url_secrets(url))
        raise BrowserUnreachable(
            f"could not connect to the browser at {option} {shown_url(url)}: {reason}"
        ) from exc


def shown_url(url: str) -> str:
    """``url`` without its user info and query: a hosted browser's token often sits there."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def url_secrets(url: str) -> set[str]:
    """The parts of ``url`` that may be credentials: password, query values, the whole."""
    parts = urlsplit(url)
    values = {value for _, value in parse_qsl(parts.query) if value}
    if parts.password:
        values.add(parts.password)
    return {url, *values} if parts.query or parts.password else values
