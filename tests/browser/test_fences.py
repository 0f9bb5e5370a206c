"""The fences in real Chromium: only http(s) pages load, and every new page is gated.

Schemes: a tab sent to a page that is not http(s), by its start URL, a ``goto``, or a
script, ends in SCHEME_BLOCKED, and nothing of that page (a marker in its content) is in
the result, its outputs or its evidence. New pages: however a tab is opened (a middle
click, a modifier key, ``target=_blank``, ``window.open``), the other origin it heads for
counts 0 requests, the page is closed, and the refusal is recorded.

The tables are small on purpose: each row is one way in, ready to run through every front
end (the CLI, an MCP agent session and a program have their own tests of the same rows).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from browser_adapters import PlaywrightHost
from browser_adapters.origin_gate import PageGuard, Refusal
from fixtures.other_origin import OtherOrigin
from fixtures.site_server import FixtureSite
from northstar.errors import OriginBlocked
from northstar.plan.model import Plan
from northstar.recipe.model import Check
from northstar.results import IterationResult
from northstar.run.runner import ProgramRunner
from tests.browser.conftest import EVENT_MS, RunText, serialized
from tests.conftest import make_plan

pytestmark = pytest.mark.browser

MARKER = "fence-marker-4711"


@pytest.fixture(scope="module")
def local_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local file whose content must never reach a result."""
    path = tmp_path_factory.mktemp("local") / "private.html"
    path.write_text(f"<h1>Private</h1><p>{MARKER}</p>")
    return path


def scheme_urls(local_file: Path, base_url: str) -> dict[str, str]:
    return {
        "file": local_file.as_uri(),
        "data": f"data:text/html,<h1>Data</h1><p>{MARKER}</p>",
        "javascript": f"javascript:document.body.innerText='{MARKER}'",
        "view-source": f"view-source:{base_url}/form",
        "chrome": "chrome://version",
        "blob": f"blob:{base_url}/4f0c6a2e-2b2a-4d4c-9f8e-5b3c1d0e7a61",
    }


SCHEMES = ["file", "data", "javascript", "view-source", "chrome", "blob"]


def fenced_recipe(start: str, goto: str | None) -> str:
    """A tab at ``start``; with ``goto``, a step that goes there; an output of the page's text."""
    steps = (
        f"""
  - id: leave
    tab: site
    goto: "{goto}"
"""
        if goto
        else """
  - id: loaded
    tab: site
    wait_for: {url: "**"}
"""
    )
    return f"""
name: fenced
timeout: 5000
tabs:
  site:
    start: "{start}"
    origins: ["{{{{ base_url }}}}"]
steps:{steps}
outputs:
  shown: {{tab: site, from: text, target: {{role: heading}}}}
"""


def assert_scheme_blocked(result: IterationResult, step: str) -> None:
    assert (result.reason_code, result.failing_step) == ("SCHEME_BLOCKED", step), result.reason
    assert MARKER not in serialized(result)
    assert not result.outputs


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("where", ["start", "goto"])
async def test_a_page_that_is_not_http_is_never_loaded(
    run_text: RunText, site: FixtureSite, local_file: Path, scheme: str, where: str
) -> None:
    url = scheme_urls(local_file, site.base_url)[scheme]
    if where == "start":
        result = await run_text(fenced_recipe(url, None))
        assert_scheme_blocked(result, "loaded")
    else:
        result = await run_text(fenced_recipe("{{ base_url }}/form", url))
        assert_scheme_blocked(result, "leave")


async def test_a_page_a_script_opens_without_a_request_is_never_read(run_text: RunText) -> None:
    """A ``blob:`` page never passes the gate: the session refuses to read or act on it."""
    text = """
name: blob
timeout: 5000
tabs:
  site: {start: "{{ base_url }}/leave?to=http%3A%2F%2F127.0.0.1%3A9%2F"}
steps:
  - id: open
    tab: site
    click: {target: {role: button, name: Open a blob page}}
    expect:
      - url: "blob:**"
outputs:
  shown: {tab: site, from: text, target: {text: "made by a script", exact: false}}
"""
    result = await run_text(text)
    assert (result.reason_code, result.failing_step) == ("SCHEME_BLOCKED", "open"), result.reason
    assert "blob-secret-7731" not in serialized(result)
    assert not result.outputs


async def test_the_gate_refuses_a_file_page_before_it_loads(
    host: PlaywrightHost, site: FixtureSite, local_file: Path
) -> None:
    """Chromium fetches ``file:`` through the gate too: refused even if a navigation skips
    the session's own check."""
    refusals: list[Refusal] = []

    def guard() -> PageGuard:
        return PageGuard(frozenset({site.base_url}), refusals.append, guard)

    context = await host.browser.new_context()
    try:
        page = await context.new_page()
        await host.gate.watch(context, page, guard())
        with pytest.raises(PlaywrightError, match="ERR_BLOCKED_BY_CLIENT"):
            await page.goto(local_file.as_uri())
    finally:
        await context.close()
    assert [(r.url, r.reason) for r in refusals] == [(local_file.as_uri(), "scheme")]


async def test_settle_returns_once_a_new_undeclared_page_asked_for_its_first_document(
    host: PlaywrightHost, site: FixtureSite, other: OtherOrigin
) -> None:
    """A step is judged after ``settle``: a page it opened that asks for its first document
    later than the step returns (a few milliseconds on a quiet machine; forced here by a blank
    popup the opener sends away afterwards) is answered by the gate before ``settle`` ends."""
    refusals: list[Refusal] = []

    def undeclared() -> PageGuard:
        return PageGuard(frozenset({site.base_url}), refusals.append, undeclared, undeclared=True)

    guard = PageGuard(frozenset({site.base_url}), refusals.append, undeclared)
    context = await host.browser.new_context()
    try:
        page = await context.new_page()
        await host.gate.watch(context, page, guard)
        await page.goto(f"{site.base_url}/form")
        async with page.expect_popup(timeout=EVENT_MS):
            await page.evaluate("() => { window.opened = window.open('', '_blank') }")
        settling = asyncio.ensure_future(host.gate.settle(context, timeout_s=EVENT_MS / 1000))
        told_when_settled: list[int] = []
        settling.add_done_callback(lambda _done: told_when_settled.append(len(refusals)))
        landing = f"{other.base_url}/landing"
        await page.evaluate("url => { window.opened.location.href = url }", landing)
        await settling
    finally:
        await context.close()
    assert told_when_settled == [1], "settle ended before the page's first request was answered"
    assert [(r.url, r.outside) for r in refusals] == [(landing, True)]
    assert other.requests() == []


# New pages, however they are opened


OpenPage = Callable[[Page, str], Awaitable[Any]]


def _link(name: str, **options: Any) -> OpenPage:
    return lambda page, _landing: page.get_by_role("link", name=name).click(**options)


WAYS: dict[str, OpenPage] = {
    "middle-click": _link("Go there directly", button="middle"),
    "ctrl-click": _link("Go there directly", modifiers=["Control"]),
    "shift-click": _link("Go there directly", modifiers=["Shift"]),
    "target=_blank": _link("Open the other origin in a tab"),
    "window.open": lambda page, landing: page.evaluate("url => window.open(url)", landing),
}


def leave_plan(site: FixtureSite, landing: str, step: str) -> Plan:
    """A tab at the page whose links all head for ``landing``, and one step on it."""
    text = f"""
name: new-pages
tabs:
  site: {{start: "{{{{ base_url }}}}/leave?to={quote(landing, safe="")}"}}
steps:
  - id: step
    tab: site
    {step}
"""
    return make_plan(text, base_url=site.base_url)


async def refusal_of_new_page(
    host: PlaywrightHost,
    plan: Plan,
    open_page: Callable[[Any], Awaitable[Any]] | None = None,
    *,
    closed_first_ok: bool = False,
) -> str:
    """Run ``plan`` (then ``open_page`` on its tab); wait until the session closed the page
    that opened, and return the refusal as the run, or the next step, reports it.

    ``closed_first_ok``: a page opened from outside any step (the test's own click) may be
    closed by the session before it asked for anything (a busy machine delivers the
    context's ``page`` event before the gate sees the page's first request): then nothing
    was refused and ``""`` is returned; the caller still checks that nothing arrived.
    """
    async with host.session(plan) as session:
        async with session.context.expect_page(timeout=EVENT_MS) as opened:
            result = await ProgramRunner(host).run_iteration(plan, session=session)
            if open_page is not None:
                await open_page(session.page("site"))
        new_page = await opened.value
        if not new_page.is_closed():  # the session closes it; fails here if it does not
            await new_page.wait_for_event("close", timeout=EVENT_MS)
        if result.reason_code == "ORIGIN_BLOCKED":
            return result.reason or ""
        try:
            await session.check(Check(url="**"), tab="site", timeout_ms=EVENT_MS)
        except OriginBlocked as refused:
            return refused.message
        assert closed_first_ok, "the new page was closed, but no refusal was reported"
        return ""


@pytest.mark.parametrize("way", sorted(WAYS))
async def test_a_new_page_is_gated_before_its_first_request(
    host: PlaywrightHost, site: FixtureSite, other: OtherOrigin, way: str
) -> None:
    landing = f"{other.base_url}/landing"
    plan = leave_plan(site, landing, 'wait_for: {url: "**/leave**"}')
    reason = await refusal_of_new_page(
        host, plan, lambda page: WAYS[way](page, landing), closed_first_ok=True
    )
    if reason:  # the gate saw the first request before the session closed the page
        assert "no step declares" in reason, reason
        assert landing in reason, reason
    assert other.requests() == []  # either way, nothing reached the other origin


async def test_a_middle_click_step_of_a_recipe_opens_nothing_that_loads(
    host: PlaywrightHost, site: FixtureSite, other: OtherOrigin
) -> None:
    """The recipe's own ``click: {button: middle}``: the tab it opens is undeclared."""
    landing = f"{other.base_url}/landing"
    step = "click: {target: {role: link, name: Go there directly}, button: middle}"
    reason = await refusal_of_new_page(host, leave_plan(site, landing, step))
    assert "no step declares" in reason, reason
    assert landing in reason, reason
    assert other.requests() == []
