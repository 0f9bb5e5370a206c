"""Expectations as Playwright's auto-waiting assertions, with the step's timeout."""

from __future__ import annotations

import asyncio
import re

from playwright.async_api import Page, expect

from browser_adapters.locators import build_locator
from browser_adapters.page_requests import PageRequests, wait_idle
from northstar.recipe.model import Check
from northstar.results import Evidence

__all__ = ["glob_to_regex", "run_check"]


def glob_to_regex(glob: str) -> re.Pattern[str]:
    """A URL glob as a regex: ``**`` any text, ``*`` any text without ``/``."""
    parts = re.split(r"(\*\*|\*)", glob)
    body = "".join(
        ".*" if part == "**" else "[^/]*" if part == "*" else re.escape(part) for part in parts
    )
    return re.compile(f"^{body}$")


async def run_check(
    page: Page,
    check: Check,
    *,
    tab: str,
    timeout_ms: int,
    shown: str,
    requests: PageRequests | None = None,
) -> Evidence:
    """Wait until ``check`` holds on ``page``; an ``AssertionError`` means it did not.

    ``shown`` is the check's description with secrets redacted, as the caller already
    made it for its error context. ``requests`` are the page's, for an ``idle`` check.
    """
    await _assert(page, check, timeout_ms, requests or PageRequests())
    return Evidence(check.kind, tab, shown, True, "as expected")


async def _any_of(page: Page, checks: list[Check], timeout: int, requests: PageRequests) -> None:
    """Wait for the checks together; the first that holds wins, the others are cancelled."""
    waits = {asyncio.ensure_future(_assert(page, each, timeout, requests)) for each in checks}
    failures: list[str] = []
    try:
        while waits:
            done, waits = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for finished in done:
                error = finished.exception()
                if error is None:
                    return
                if not isinstance(error, AssertionError):
                    raise error
                failures.append(str(error).split("Call log:")[0].strip())
    finally:
        for left in waits:
            left.cancel()
    raise AssertionError("none of the checks held: " + " | ".join(failures))


async def _assert(page: Page, check: Check, timeout: int, requests: PageRequests) -> None:
    if check.any_of is not None:
        await _any_of(page, check.any_of, timeout, requests)
    elif check.idle is not None:
        await wait_idle(requests, check.idle, timeout)
    elif check.url is not None:
        await expect(page).to_have_url(glob_to_regex(check.url), timeout=timeout)
    elif check.url_regex is not None:
        await expect(page).to_have_url(re.compile(check.url_regex), timeout=timeout)
    elif check.visible is not None:
        await expect(build_locator(page, check.visible)).to_be_visible(timeout=timeout)
    elif check.hidden is not None:
        await expect(build_locator(page, check.hidden)).to_be_hidden(timeout=timeout)
    elif check.text is not None:
        locator = build_locator(page, check.text.target)
        if check.text.equals is not None:
            await expect(locator).to_have_text(check.text.equals, timeout=timeout)
        else:
            await expect(locator).to_contain_text(check.text.contains or "", timeout=timeout)
    elif check.value is not None:
        locator = build_locator(page, check.value.target)
        await expect(locator).to_have_value(check.value.equals, timeout=timeout)
    elif check.checked is not None:
        locator = build_locator(page, check.checked.target)
        await expect(locator).to_be_checked(checked=check.checked.checked, timeout=timeout)
    elif check.count is not None:
        locator = build_locator(page, check.count.target)
        await expect(locator).to_have_count(check.count.equals, timeout=timeout)
    elif check.title is not None:
        if check.title.equals is not None:
            await expect(page).to_have_title(check.title.equals, timeout=timeout)
        else:
            pattern = re.compile(re.escape(check.title.contains or ""))
            await expect(page).to_have_title(pattern, timeout=timeout)
