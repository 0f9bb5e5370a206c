"""The acted-on read: in Playwright's utility world through the facts engine, or in the main
world for a page whose Playwright has no such engine; the same facts either way.

The page's own scripts patch what its main world sees (a form's ``action``, an element's
``getBoundingClientRect``) and count every change to its DOM: the engine's read sees the
real form, and changes nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from browser_adapters.acted_on import SelectChoices, describe_acted_on
from fixtures.handwritten.launch import AUTO, launch
from fixtures.site_server import FixtureSite
from tests.browser.conftest import EVENT_MS

FORM = """
<form action="/contact" method="post">
  <label>Name <input id="name"></label>
  <label for="size">Size</label>
  <select id="size">
    <option value="m">  Medium
      size </option>
    <option value="l">La&shy;r&#8203;ge</option>
    <option value="s">Small&nbsp;one</option>
  </select>
  <button>Send</button>
  <button type="button">Other</button>
</form>
"""
# What a page may do to its own main world; Northstar's read must not be fooled by it.
PATCHES = """<script>
  Object.defineProperty(HTMLFormElement.prototype, 'action', {get: () => 'http://elsewhere.test/'});
  Element.prototype.getBoundingClientRect = () => ({x: 0, y: 0, width: 0, height: 0});
  window.changes = 0;
  new MutationObserver((seen) => { window.changes += seen.length; })
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
</script>"""


async def _form_page(page: Page, site: FixtureSite, extra: str = "") -> Page:
    await page.goto(f"{site.base_url}/form")
    await page.set_content(FORM + extra)  # document.write: the URL (and so the action) stays
    return page


@pytest.fixture
async def page(host: Any) -> AsyncIterator[Page]:
    """A page of a context made by the host's Playwright, which has the facts engine."""
    context = await host.browser.new_context()
    try:
        yield await context.new_page()
    finally:
        await context.close()


@pytest.fixture(scope="module")
async def foreign_browser() -> AsyncIterator[Any]:
    """A browser of another Playwright instance, as a pytest-playwright test has: no engine."""
    async with async_playwright() as playwright, await launch(playwright, AUTO) as browser:
        yield browser


async def test_the_read_sees_the_real_form_and_changes_nothing(
    page: Page, site: FixtureSite
) -> None:
    await _form_page(page, site, PATCHES)
    send = page.get_by_role("button", name="Send", exact=True)
    # The main world is fooled, so a read there could not pass this test.
    assert await send.evaluate("b => b.form.action") == "http://elsewhere.test/"
    read = await describe_acted_on(send, timeout_ms=EVENT_MS, submit=True)
    assert read.summary() == f'button "Send" <button>; submits form: POST {site.base_url}/contact'
    assert read.visible
    await page.wait_for_function("() => true")  # observers' callbacks have run
    assert await page.evaluate("window.changes") == 0


async def test_a_select_lists_its_options_and_the_missing_choices(
    page: Page, site: FixtureSite
) -> None:
    await _form_page(page, site)
    size = page.get_by_label("Size", exact=True)
    choices = SelectChoices(value_or_label=("Medium size", "xl"), labels=("Large",))
    read = await describe_acted_on(size, timeout_ms=EVENT_MS, submit=False, choices=choices)
    assert read.summary() == 'combobox "Size" <select>'
    assert read.options == ("m (Medium size)", "l (Large)", "s (Small one)")
    assert read.missing == ("xl",)


async def test_several_matches_fail_at_once_and_none_waits_out_the_timeout(
    page: Page, site: FixtureSite
) -> None:
    await _form_page(page, site)
    with pytest.raises(PlaywrightError, match="strict mode violation"):
        await describe_acted_on(page.get_by_role("button"), timeout_ms=30_000, submit=False)
    with pytest.raises(PlaywrightTimeoutError):
        await describe_acted_on(page.get_by_label("Phone"), timeout_ms=200, submit=False)


async def test_a_page_without_the_engine_is_read_in_its_main_world_with_the_same_facts(
    page: Page, site: FixtureSite, foreign_browser: Any
) -> None:
    context = await foreign_browser.new_context()
    try:
        foreign = await _form_page(await context.new_page(), site)
        await _form_page(page, site)
        choices = SelectChoices(value_or_label=("xl",))
        for target in ("Name", "Size"):
            fields = [p.get_by_label(target, exact=True) for p in (page, foreign)]
            read = [
                await describe_acted_on(f, timeout_ms=EVENT_MS, submit=False, choices=choices)
                for f in fields
            ]
            assert read[0] == read[1]
        send = [p.get_by_role("button", name="Send") for p in (page, foreign)]
        read = [await describe_acted_on(s, timeout_ms=EVENT_MS, submit=True) for s in send]
        assert read[0] == read[1]
        assert read[1].form_action == f"{site.base_url}/contact"
        with pytest.raises(PlaywrightError, match="strict mode violation"):
            await describe_acted_on(foreign.get_by_role("button"), timeout_ms=30_000, submit=False)
    finally:
        await context.close()


@pytest.mark.parametrize(
    "label", ["Medium size", " Medium\u00a0size\n", "Large", "Lar ge", "Small one", "Small  one"]
)
async def test_a_label_is_missing_exactly_when_playwright_cannot_select_it(
    page: Page, site: FixtureSite, label: str
) -> None:
    await _form_page(page, site)
    size = page.get_by_label("Size", exact=True)
    choices = SelectChoices(labels=(label,))
    read = await describe_acted_on(size, timeout_ms=EVENT_MS, submit=False, choices=choices)
    try:
        await size.select_option(label=label, timeout=300)
        selected = True
    except PlaywrightTimeoutError:
        selected = False
    assert read.missing == (() if selected else (label,))
