"""A recipe on a page someone else opened (``composition.run_on_page``), in real Chromium.

The browser here is launched with plain Playwright, as pytest-playwright launches its own:
no Northstar host and no origin gate until a recipe runs on one of its pages.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.async_api import Browser, Page, async_playwright

from browser_adapters.discovery import find_browser
from fixtures.other_origin import OtherOrigin
from fixtures.site_server import FixtureSite
from northstar.cases.shared_browser import LoopThread
from northstar.composition import run_on_page
from tests.browser.conftest import EVENT_MS

RECIPE = """\
name: browser-facts
version: 1
tabs:
  site:
    start: "{{ base_url }}/browser"
steps:
  - id: facts
    tab: site
    verify_outcome: {visible: {role: heading, name: Browser facts}}
outputs:
  agent: {tab: site, from: text, target: {test_id: user-agent}}
"""


@pytest.fixture(scope="module")
async def plain_browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=find_browser())
        yield browser
        await browser.close()


@pytest.fixture
async def given_page(plain_browser: Browser) -> AsyncIterator[Page]:
    context = await plain_browser.new_context(user_agent="GivenContext/1")
    yield await context.new_page()
    await context.close()


@pytest.fixture(scope="module")
def other() -> Iterator[OtherOrigin]:
    with OtherOrigin() as server:
        yield server


pytestmark = pytest.mark.browser


async def test_the_recipe_runs_on_the_given_page(
    given_page: Page, site: FixtureSite, tmp_path: Path
) -> None:
    (tmp_path / "facts.yaml").write_text(RECIPE)
    _, result = await run_on_page(given_page, tmp_path / "facts.yaml", {}, base_url=site.base_url)
    assert result.verified, result.reason
    assert dict(result.outputs) == {"agent": "GivenContext/1"}  # the given context's option
    assert given_page.url == f"{site.base_url}/browser"
    assert given_page.context.pages == [given_page]  # the first role opened no page of its own


async def test_origins_hold_on_the_given_page_and_the_gate_goes_after(
    given_page: Page, site: FixtureSite, other: OtherOrigin, tmp_path: Path
) -> None:
    away = f"/redirect?to={quote(other.base_url + '/landing', safe='')}"
    leave = f'  - id: leave\n    tab: site\n    goto: "{away}"\n'
    (tmp_path / "leave.yaml").write_text(RECIPE.replace("outputs:", leave + "outputs:"))
    other.reset()
    _, result = await run_on_page(given_page, tmp_path / "leave.yaml", {}, base_url=site.base_url)
    assert (result.reason_code, result.failing_step) == ("ORIGIN_BLOCKED", "leave"), result.reason
    assert other.requests() == []
    # The refused document's error page commits on its own; then the test navigates freely.
    await given_page.wait_for_url("chrome-error://**", timeout=EVENT_MS)
    await given_page.goto(site.base_url + away, timeout=EVENT_MS)
    assert other.requests() == ["GET /landing"]


async def test_a_page_the_test_opens_after_the_recipe_stays_its_own(
    given_page: Page, site: FixtureSite, tmp_path: Path
) -> None:
    """Undeclared new pages are closed only while the recipe runs, never the test's later."""
    (tmp_path / "facts.yaml").write_text(RECIPE)
    _, result = await run_on_page(given_page, tmp_path / "facts.yaml", {}, base_url=site.base_url)
    assert result.verified, result.reason
    own = await given_page.context.new_page()
    await own.goto(f"{site.base_url}/form", timeout=EVENT_MS)
    assert await own.title()
    assert not own.is_closed()


async def test_a_start_url_that_fails_leaves_the_given_page_open(
    given_page: Page, site: FixtureSite, tmp_path: Path
) -> None:
    (tmp_path / "missing.yaml").write_text(RECIPE.replace("/browser", "/no-such-page"))
    _, result = await run_on_page(given_page, tmp_path / "missing.yaml", {}, base_url=site.base_url)
    assert result.reason_code == "NAVIGATION_FAILED", result.reason
    assert not given_page.is_closed()  # the test's page: its fixture closes it, not the recipe


async def test_the_cases_loop_runs_beside_a_running_loop() -> None:
    # A running loop in this thread, as Playwright's sync API leaves one after a page test.
    assert asyncio.get_running_loop().is_running()
    refused = asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="running event loop"):
        asyncio.Runner().run(refused)
    refused.close()
    loop = LoopThread()
    try:
        assert loop.run(asyncio.sleep(0, result="done")) == "done"
    finally:
        loop.close()
