"""The read-only guard of a probe's context: reads go out, nothing else does.

A reconcile probe and a positive control look at the site in the run's signed-in state;
a script on a page they load could still post (an autosave, a "mark as read", a form a
redirect lands on). In their contexts every request is routed here first: GET and HEAD
go on, any other method is aborted before it is sent and logged with its method and the
URL without its query (which may hold a value the run typed). The decision is
``may_send``, a plain function.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import structlog
from playwright.async_api import BrowserContext, Route

__all__ = ["guard_read_only", "may_send"]

log = structlog.get_logger("northstar.browser.read_only")

_READS = frozenset({"GET", "HEAD"})


def may_send(method: str) -> bool:
    """Whether a probe's context lets a request with this method go out."""
    return method.upper() in _READS


async def guard_read_only(context: BrowserContext) -> None:
    """Route every request of ``context`` through the guard, before its first page opens."""
    await context.route("**/*", _route)


async def _route(route: Route) -> None:
    request = route.request
    if may_send(request.method):
        await route.fallback()  # a HAR replay routed earlier still answers it
        return
    parts = urlsplit(request.url)
    log.warning(
        "probe_request_refused",
        method=request.method,
        url=f"{parts.scheme}://{parts.netloc}{parts.path}",
    )
    await route.abort("blockedbyclient")
