"""What one iteration leaves in the browser, the next never finds: new context or reset one.

Iteration 1 sets every kind of state on the fixture site's state page (``/state``): a
script cookie and an HttpOnly cookie from the server, localStorage, sessionStorage,
IndexedDB, Cache Storage, a service worker and a granted geolocation permission; and the
storage kinds again in a cross-origin iframe (``localhost`` inside ``127.0.0.1``), whose
storage is partitioned under the top-level site. Iteration 2 reads them all back, in the
same tab as iteration 1 when the context is reused, and finds none of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from browser_adapters import PlaywrightHost
from browser_adapters.context_reset import origins_to_clear
from browser_adapters.session import PlaywrightSession
from fixtures.site_server import FixtureSite
from northstar.browser.settings import BrowserSettings
from northstar.plan.model import Plan
from northstar.run.runner import ProgramRunner
from tests.browser.conftest import EVENT_MS, LOADED, recipe
from tests.browser.test_tabs import APPLY_GREEN, OPENERS, chooser_recipe
from tests.conftest import make_plan

EVERY_KIND = {
    "script_cookie",
    "http_only_cookie",
    "local_storage",
    "session_storage",
    "indexed_db",
    "cache_storage",
    "service_worker",
    "geolocation",
}
# A third-party frame may not set cookies; it sees the permission its top-level page has.
FRAME_KINDS = EVERY_KIND - {"script_cookie", "http_only_cookie"}

ADD_FRAME = """url => new Promise(loaded => {
  const frame = document.createElement("iframe");
  frame.src = url;
  frame.onload = loaded;
  document.body.appendChild(frame);
})"""


@pytest.fixture(scope="module")
async def other_host(host: PlaywrightHost) -> AsyncIterator[PlaywrightHost]:
    """A browser in the mode the session's ``host`` is not in (new or reset contexts)."""
    settings = BrowserSettings(context_reset=not host.options.context_reset)
    async with PlaywrightHost(settings) as started:
        yield started


@pytest.fixture
def reset_host(host: PlaywrightHost, other_host: PlaywrightHost) -> PlaywrightHost:
    """The browser whose iterations reuse one context per lane, reset between them."""
    return host if host.options.context_reset else other_host


def found(state: dict[str, bool]) -> set[str]:
    return {kind for kind, present in state.items() if present}


async def state_in(session: PlaywrightSession, plan: Plan, script: str, other: str) -> Any:
    """Run ``script`` in the state page and in its cross-origin frame: (page's, frame's)."""
    await session.open_tab(plan.tabs["site"], timeout_ms=EVENT_MS)
    page = session.page("site")
    await page.evaluate(ADD_FRAME, f"{other}/state")
    return await page.evaluate(script), await page.frames[1].evaluate(script)


@pytest.mark.browser
@pytest.mark.parametrize("mode", ["new context", "reset context"])
async def test_nothing_an_iteration_sets_is_found_by_the_next(
    mode: str, host: PlaywrightHost, other_host: PlaywrightHost, site: FixtureSite
) -> None:
    resetting = mode == "reset context"
    used = host if host.options.context_reset is resetting else other_host
    plan = make_plan(recipe("/state", LOADED), base_url=site.base_url)
    other = site.base_url.replace("127.0.0.1", "localhost")
    async with used.session(plan) as first:
        await first.context.grant_permissions(["geolocation"], origin=site.base_url)
        page_set, frame_set = await state_in(first, plan, "setAllState()", other)
        first_page = first.page("site")
    async with used.session(plan) as second:
        page_read, frame_read = await state_in(second, plan, "readAllState()", other)
        reused = second.page("site") is first_page
    assert (found(page_set), found(frame_set)) == (EVERY_KIND, FRAME_KINDS)
    assert (found(page_read), found(frame_read)) == (set(), set())
    assert reused is resetting  # the same tab: sessionStorage was cleared


@pytest.mark.browser
@pytest.mark.parametrize("mode", ["new context", "reset context"])
async def test_keep_context_keeps_what_an_iteration_sets_in_either_mode(
    mode: str, host: PlaywrightHost, other_host: PlaywrightHost, site: FixtureSite
) -> None:
    """``--keep-context``: one session for the lane; between iterations its other tabs are
    closed and the first one's page is kept (navigated anew), as a one-page loop does."""
    resetting = mode == "reset context"
    used = host if host.options.context_reset is resetting else other_host
    plan = make_plan(recipe("/state", LOADED), base_url=site.base_url)
    async with used.session(plan) as kept:
        await kept.context.grant_permissions(["geolocation"], origin=site.base_url)
        page_set, _ = await state_in(kept, plan, "setAllState()", site.base_url)
        await kept.begin(plan)  # what the runner does at the start of the next iteration
        page_read, _ = await state_in(kept, plan, "readAllState()", site.base_url)
    assert found(page_set) == EVERY_KIND
    assert found(page_read) == EVERY_KIND  # sessionStorage too: the page is the same


@pytest.mark.browser
async def test_a_reset_context_keeps_one_blank_page_and_no_listener_of_the_last_session(
    reset_host: PlaywrightHost, site: FixtureSite
) -> None:
    """A declared popup in iteration 2: a popup listener left by iteration 1 would close it."""
    plan = make_plan(
        chooser_recipe(OPENERS["window-open-button"], APPLY_GREEN), base_url=site.base_url
    )
    runner = ProgramRunner(reset_host)
    first = await runner.run_iteration(plan)
    async with reset_host.session(plan) as between:
        context = between.context
        left = [page.url for page in context.pages]
    second = await runner.run_iteration(plan)
    assert (first.verified, second.verified) == (True, True), second.reason
    assert left == ["about:blank"]  # the opener and the chooser were closed, one page kept
    assert [s["colour"] for s in site.submissions()] == ["green", "green"]


def test_origins_to_clear_are_the_http_origins_of_documents_and_roles() -> None:
    committed = ["http://127.0.0.1:8000/state", "about:blank", "data:text/html,x"]
    declared = ["HTTP://Example.test", "http://localhost:8000/a?b#c", "http://127.0.0.1:8000"]
    assert origins_to_clear(committed, declared) == [
        "http://127.0.0.1:8000",
        "http://example.test",
        "http://localhost:8000",
    ]
