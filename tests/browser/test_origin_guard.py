"""The origin guard: which URLs are outside a role's origins, and every path out, blocked.

The decision the gate makes on each document request is pinned in tests/core/test_fences.py.
The browser tests send a tab to a second loopback origin that counts requests, by a redirect
from a start URL, a ``goto``, a link, a form, a declared popup and an undeclared one: each
must end in ORIGIN_BLOCKED (or, after a submission, OUTCOME_UNKNOWN) with that origin asked nothing.
Direct navigations to other origins are covered in test_errors.py.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from playwright.async_api import CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from browser_adapters import PlaywrightHost
from browser_adapters.origin_gate import PageGuard, Refusal
from fixtures.other_origin import OtherOrigin
from fixtures.site_server import FixtureSite
from northstar.plan.model import Plan
from northstar.results import IterationResult, IterationState
from northstar.run.runner import ProgramRunner
from tests.browser.conftest import (
    AFTER_PAGE_MS,
    EVENT_MS,
    LOADED,
    RunText,
    recipe,
)
from tests.conftest import make_plan

pytestmark = pytest.mark.browser

# Every path out: redirects and undeclared popups, against a second origin that counts requests.
# The fixture site's /redirect answers 302 (GET) or 303 (POST) to its `to` URL, and /leave
# links to it every way a page can leave; the other origin must see no request at all.


def landing(other: OtherOrigin) -> str:
    return f"{other.base_url}/landing"


def leave(other: OtherOrigin) -> str:
    """The /leave page whose links and form all head for the other origin."""
    return f"/leave?to={quote(landing(other), safe='')}"


def assert_blocked_redirect(result: IterationResult, step: str, other: OtherOrigin) -> None:
    """ORIGIN_BLOCKED at ``step``, naming the redirecting URL and where it pointed."""
    assert (result.reason_code, result.failing_step) == ("ORIGIN_BLOCKED", step), result.reason
    reason = result.reason or ""
    assert "/redirect?to=" in reason, reason
    assert f"redirected to {landing(other)}" in reason, reason
    assert other.requests() == []


async def test_start_url_redirecting_to_another_origin_is_blocked(
    run_text: RunText, other: OtherOrigin
) -> None:
    start = f"/redirect?to={quote(landing(other), safe='')}"
    result = await run_text(recipe(start, LOADED))
    assert_blocked_redirect(result, "loaded", other)


async def test_goto_redirecting_to_another_origin_is_blocked(
    run_text: RunText, other: OtherOrigin
) -> None:
    steps = f"""
    - id: leave
      tab: site
      goto: "/redirect?to={quote(landing(other), safe="")}"
    """
    result = await run_text(recipe("/form", steps))
    assert_blocked_redirect(result, "leave", other)


async def test_click_on_a_link_that_redirects_away_is_blocked(
    run_text: RunText, other: OtherOrigin
) -> None:
    steps = """
    - id: leave
      tab: site
      click: {target: {role: link, name: Leave by redirect}}
    """
    result = await run_text(recipe(leave(other), steps))
    assert_blocked_redirect(result, "leave", other)


async def test_form_submission_redirected_away_is_blocked(
    run_text: RunText, site: FixtureSite, other: OtherOrigin
) -> None:
    steps = """
    - id: send
      tab: site
      click: {target: {role: button, name: Send away}}
    """
    result = await run_text(recipe(leave(other), steps))
    assert_blocked_redirect(result, "send", other)
    assert site.submission_count("redirect") == 1  # the POST itself went to the allowed origin


async def test_check_failing_after_a_refused_redirect_reports_the_refusal(
    run_text: RunText, other: OtherOrigin
) -> None:
    """The page navigates after the click returned: its expectation fails for that reason."""
    steps = f"""
    - id: leave
      tab: site
      timeout: {AFTER_PAGE_MS}
      click: {{target: {{role: button, name: Leave later}}}}
      expect:
        - url: "**/landing"
    """
    result = await run_text(recipe(leave(other), steps))
    assert_blocked_redirect(result, "leave", other)


async def test_submit_step_redirected_away_leaves_its_outcome_unknown(
    run_text: RunText, site: FixtureSite, other: OtherOrigin
) -> None:
    """The form was sent before its answer pointed away: unknown, never silently verified."""
    steps = """
    - id: send
      tab: site
      click: {target: {role: button, name: Send away}}
      effect: submit
      expect:
        - url: "**/landing"
    """
    result = await run_text(recipe(leave(other), steps))
    assert (result.reason_code, result.state) == ("OUTCOME_UNKNOWN", IterationState.UNKNOWN)
    assert "ORIGIN_BLOCKED" in (result.reason or "")
    assert site.submission_count("redirect") == 1
    assert other.requests() == []


async def test_declared_popup_redirecting_away_is_blocked(
    run_text: RunText, other: OtherOrigin
) -> None:
    text = f"""
name: popup-away
tabs:
  site: {{start: "{{{{ base_url }}}}{leave(other)}"}}
  away: {{opened_by: open}}
steps:
  - id: open
    tab: site
    click: {{target: {{role: link, name: Open a redirecting tab}}}}
"""
    result = await run_text(text)
    assert_blocked_redirect(result, "open", other)
    assert "'away'" in (result.reason or "")


async def run_watching_pages(host: Any, plan: Plan) -> tuple[IterationResult, list[Page]]:
    """Run ``plan`` in a session kept open afterwards; also return the popups it opened."""
    async with host.session(plan) as session:
        pages: list[Page] = []
        session.context.on("page", lambda page: pages.append(page))
        result = await ProgramRunner(host).run_iteration(plan, session=session)
        roles = set(session.pages().values())
        if all(page in roles for page in pages):  # the popup's event may still be on its way
            await session.context.wait_for_event("page", timeout=EVENT_MS)  # the listener keeps it
        popups = [page for page in pages if page not in roles]
        for popup in popups:  # the session closes each undeclared popup; fails if it does not
            if not popup.is_closed():
                await popup.wait_for_event("close", timeout=EVENT_MS)
        return result, popups


async def test_undeclared_popup_to_another_origin_is_blocked_and_closed(
    host: Any, site: FixtureSite, other: OtherOrigin
) -> None:
    steps = """
    - id: open
      tab: site
      click: {target: {role: link, name: Open the other origin in a tab}}
    """
    plan = make_plan(recipe(leave(other), steps), base_url=site.base_url)
    result, popups = await run_watching_pages(host, plan)
    assert (result.reason_code, result.failing_step) == ("ORIGIN_BLOCKED", "open"), result.reason
    assert "no step declares" in (result.reason or "")
    assert landing(other) in (result.reason or "")
    assert len(popups) == 1
    assert popups[0].is_closed()
    assert other.requests() == []


async def test_undeclared_popup_inside_the_origins_is_closed_and_recorded(
    host: Any, site: FixtureSite, other: OtherOrigin
) -> None:
    steps = """
    - id: open
      tab: site
      click: {target: {role: link, name: Open items in a tab}}
    """
    plan = make_plan(recipe(leave(other), steps), base_url=site.base_url)
    result, popups = await run_watching_pages(host, plan)
    assert result.verified, result.reason
    evidence = [e for e in result.steps[0].evidence if e.kind == "popup_closed"]
    assert len(evidence) == 1
    assert "/items?page=1" in evidence[0].found
    assert len(popups) == 1
    assert popups[0].is_closed()


async def test_a_page_watched_again_has_the_new_guard_and_no_new_cdp_session(
    host: PlaywrightHost, other: OtherOrigin
) -> None:
    """A reused context's kept page is watched once per iteration, each time with its guard."""
    refusals: list[Refusal] = []

    def guard(*origins: str) -> PageGuard:
        return PageGuard(frozenset(origins), refusals.append, lambda: guard(*origins))

    context = await host.browser.new_context()
    sessions = 0
    made = context.new_cdp_session

    async def counted(page: Page) -> CDPSession:
        nonlocal sessions
        sessions += 1
        return await made(page)

    context.new_cdp_session = counted  # type: ignore[method-assign]
    try:
        page = await context.new_page()
        await host.gate.watch(context, page, guard(other.base_url))
        await page.goto(landing(other))  # the first guard lets it go there
        await host.gate.watch(context, page, guard("http://127.0.0.1:1"))
        with pytest.raises(PlaywrightError, match="ERR_BLOCKED_BY_CLIENT"):
            await page.goto(landing(other))
    finally:
        await context.close()
    assert [r.url for r in refusals] == [landing(other)]
    assert other.requests() == ["GET /landing"]
    assert sessions == 1
