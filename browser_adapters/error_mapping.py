"""The one place where Playwright's errors become Northstar errors.

Playwright reports most failures as ``Error`` with a message; the message is matched
against a few stable fragments and converted with ``raise ... from exc`` so the cause
stays attached for debugging while the core sees a stable code.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from northstar.errors import (
    ActionFailed,
    ExpectationFailed,
    NavigationFailed,
    NorthstarError,
    OriginBlocked,
    SiteUnreachable,
    TabClosed,
    TargetAmbiguous,
)
from northstar.redaction import redact

__all__ = ["converted_errors", "short_message"]

_CLOSED = ("Target page, context or browser has been closed", "Target closed", "has been closed")
# Chromium's network errors where no page came back at all: the site, not the page, failed.
_NET_ERROR = re.compile(r"net::(?P<name>ERR_[A-Z0-9_]+)(?: at (?P<url>\S+))?")
_UNREACHABLE = (
    ("ERR_CONNECTION_", "the connection failed"),
    ("ERR_NAME_", "the host name did not resolve"),
    ("ERR_ADDRESS_", "the address cannot be reached"),
    ("ERR_INTERNET_DISCONNECTED", "this machine is offline"),
    ("ERR_NETWORK_", "the network failed"),
    ("ERR_TIMED_OUT", "the connection timed out"),
    ("ERR_EMPTY_RESPONSE", "the server closed the connection without an answer"),
    ("ERR_SSL_", "the TLS handshake failed"),
    ("ERR_CERT_", "the TLS certificate was refused"),
    ("ERR_BAD_SSL_", "the TLS handshake failed"),
    ("ERR_PROXY_", "the proxy failed"),
    ("ERR_TUNNEL_", "the proxy tunnel failed"),
    ("ERR_SOCKS_", "the SOCKS proxy failed"),
    ("ERR_UNSAFE_PORT", "Chromium refuses to connect to that port"),
)


@asynccontextmanager
async def converted_errors(
    what: str, *, tab: str, secrets: Collection[str] = (), navigation: bool = False
) -> AsyncIterator[None]:
    """Convert Playwright errors raised inside the block; ``what`` names the operation.

    ``what`` may hold rendered values (a URL with a token), so it is redacted here, once.
    """
    what = redact(what, secrets)
    try:
        yield
    except NorthstarError:
        raise
    except AssertionError as exc:
        raise _assertion(what, exc, tab, secrets) from exc
    except PlaywrightTimeoutError as exc:
        kind = NavigationFailed if navigation else ActionFailed
        raise kind(f"{what}: timed out", tab=tab) from exc
    except PlaywrightError as exc:
        raise _classify(what, exc, tab, secrets, navigation) from exc


def short_message(exc: BaseException, secrets: Collection[str] = ()) -> str:
    """The first meaningful lines of a Playwright message, without the call log."""
    text = str(getattr(exc, "message", None) or exc).split("Call log:")[0]
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return redact(" / ".join(lines)[:400], secrets)


def _assertion(
    what: str, exc: AssertionError, tab: str, secrets: Collection[str]
) -> NorthstarError:
    message = short_message(exc, secrets)
    if "strict mode violation" in message:
        return TargetAmbiguous(f"{what}: more than one element matches", tab=tab)
    return ExpectationFailed(f"{what}: {message}", tab=tab)


def _classify(
    what: str, exc: PlaywrightError, tab: str, secrets: Collection[str], navigation: bool
) -> NorthstarError:
    message = short_message(exc, secrets)
    if "ERR_BLOCKED_BY_CLIENT" in message:
        return OriginBlocked(f"{what}: navigation blocked (origin not allowed)", tab=tab)
    if any(fragment in message for fragment in _CLOSED):
        return TabClosed(f"{what}: the tab {tab!r} was closed", tab=tab)
    if "strict mode violation" in message:
        return TargetAmbiguous(f"{what}: more than one element matches", tab=tab)
    unreachable = _unreachable(message, what, tab)
    if unreachable is not None:
        return unreachable
    if navigation or "net::ERR" in message:
        return NavigationFailed(f"{what}: {message}", tab=tab)
    return ActionFailed(f"{what}: {message}", tab=tab)


def _unreachable(message: str, what: str, tab: str) -> SiteUnreachable | None:
    """``SITE_UNREACHABLE`` for a network error where no page came back (refused, DNS, TLS)."""
    found = _NET_ERROR.search(message)
    if found is None:
        return None
    name = found["name"]
    words = next((said for prefix, said in _UNREACHABLE if name.startswith(prefix)), None)
    if words is None:
        return None
    url = found["url"] or what.removeprefix("goto ")
    return SiteUnreachable(
        f"{url} could not be reached: {words} ({name})", tab=tab, url=url, net_error=name
    )
