"""A context's network as a HAR recording, and a replay that answers from it alone.

Recording uses Playwright's own HAR writer (``record_har_path``; written when the context
closes). Replay routes every request of the context through ``route_from_har``; what
the recording cannot answer falls through to a last route that aborts it and keeps its
URL, so a replay never reaches the network and says exactly what was missing. The
session reports those URLs after the step that caused them (``NAVIGATION_FAILED``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from playwright.async_api import BrowserContext, Request, Route

from northstar.errors import NavigationFailed
from northstar.redaction import redact

__all__ = ["UnrecordedRequests", "har_recording_options", "named_misses", "replay_from_har"]

# The abort reason a page sees for a request the recording does not hold.
_ABORT_REASON = "internetdisconnected"
_LISTED = 5  # URLs named in one message; the rest are counted


def har_recording_options(path: str | None) -> dict[str, Any]:
    """``new_context`` keywords that record the context's network to ``path`` (content inline)."""
    if path is None:
        return {}
    return {"record_har_path": path, "record_har_content": "embed", "record_har_mode": "full"}


class UnrecordedRequests:
    """Requests a replay could not answer from its recording; each was aborted."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self._reported = 0

    async def abort(self, route: Route, request: Request) -> None:
        self.urls.append(request.url)
        await route.abort(_ABORT_REASON)

    def raise_new(self, *, tab: str, secrets: Collection[str] = ()) -> None:
        """``NAVIGATION_FAILED`` naming the requests aborted since the last report, if any."""
        new = self.urls[self._reported :]
        self._reported = len(self.urls)
        if not new:
            return
        listed = ", ".join(redact(url, secrets) for url in new[:_LISTED])
        more = f" and {len(new) - _LISTED} more" if len(new) > _LISTED else ""
        raise NavigationFailed(
            f"not in the recording, so aborted: {listed}{more}",
            tab=tab,
            fix="The page asked for something the case never recorded: record the case "
            "again (northstar record) if the site or the recipe changed on purpose.",
        )


async def replay_from_har(context: BrowserContext, har: str | Path) -> UnrecordedRequests:
    """Answer the context's requests from ``har``; abort and keep whatever it lacks."""
    unrecorded = UnrecordedRequests()
    # Routes registered later run first: the recording, then (fallback) the abort.
    await context.route("**/*", unrecorded.abort)
    await context.route_from_har(har, not_found="fallback")
    return unrecorded


@asynccontextmanager
async def named_misses(
    unrecorded: UnrecordedRequests | None, *, tab: str, secrets: Collection[str] = ()
) -> AsyncIterator[None]:
    """A navigation that failed in a replay because the recording lacked it says so."""
    try:
        yield
    except NavigationFailed as exc:
        if unrecorded is not None:
            try:
                unrecorded.raise_new(tab=tab, secrets=secrets)
            except NavigationFailed as missing:
                raise missing from exc
        raise
