"""What the page's accessibility tree says about the elements CSS selectors match.

For ``northstar lint --live URL``: each selector that matches exactly one element gets
that element's ARIA role and accessible name, read from Playwright's ARIA snapshot of it
(``locator.aria_snapshot()``, whose first line is ``- role "name"``). A selector that
matches none or several, or an element with no role a recipe can name (``generic``), is
left out: lint then suggests from what the step does with the element.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from playwright.async_api import Browser, Locator
from playwright.async_api import Error as PlaywrightError

from northstar.errors import NavigationFailed
from northstar.recipe.model import ARIA_ROLES

__all__ = ["roles_by_css"]

_FIRST_NODE = re.compile(r'^- (?P<role>[a-z]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?')
_UNNAMEABLE = frozenset({"generic", "none", "presentation"})


async def roles_by_css(
    browser: Browser, url: str, selectors: Iterable[str], timeout_ms: float = 10_000
) -> dict[str, tuple[str, str]]:
    """``{selector: (role, name)}`` for the selectors that match one nameable element."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        try:
            await page.goto(url, timeout=timeout_ms)
        except PlaywrightError as exc:
            raise NavigationFailed(
                f"cannot open {url} to read its elements: {exc.message.splitlines()[0]}",
                fix="Give --live the URL of a page that serves the recipe's targets.",
            ) from exc
        found: dict[str, tuple[str, str]] = {}
        for selector in selectors:
            described = await _describe(page.locator(selector), timeout_ms)
            if described is not None:
                found[selector] = described
        return found
    finally:
        await context.close()


async def _describe(locator: Locator, timeout_ms: float) -> tuple[str, str] | None:
    try:
        if await locator.count() != 1:
            return None
        snapshot = await locator.aria_snapshot(timeout=timeout_ms)
    except PlaywrightError:  # a selector Playwright cannot parse: no advice from the page
        return None
    match = _FIRST_NODE.match(snapshot.strip())
    if match is None or match["role"] not in ARIA_ROLES or match["role"] in _UNNAMEABLE:
        return None
    name = (match["name"] or "").replace('\\"', '"').replace("\\\\", "\\")
    return match["role"], name
