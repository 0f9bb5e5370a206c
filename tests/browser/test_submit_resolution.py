"""A submission's target is one visible element before its in-flight record is written.

The adapter reads the element once (the ``acted_on`` read) and skips the separate strict
wait when that read already finds exactly one visible element; otherwise the wait
decides. These tests hide the form's Send button so that the read cannot take the short
way: the submission must still wait for it, and must not start while it stays hidden. The
target is a css selector because a role locator already leaves hidden elements out.
"""

from __future__ import annotations

from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.errors import TargetMissing
from tests.browser.conftest import EVENT_MS, recipe
from tests.conftest import make_plan

pytestmark = pytest.mark.browser

SEND = """
- id: send
  tab: site
  timeout: 3000
  click: {target: {css: "button[type=submit]"}}
  effect: submit
  expect:
    - url: "**/form/thanks?id=*"
"""

HIDE = "document.querySelector('button[type=submit]').style.visibility = 'hidden'"
SHOW_LATER = (
    "setTimeout(() => { document.querySelector('button[type=submit]')"
    ".style.visibility = 'visible' }, 200)"
)


async def _send(host: Any, site: FixtureSite, *scripts: str) -> tuple[list[str], Any]:
    """Open the form, run ``scripts`` in it, then perform the submitting step."""
    plan = make_plan(recipe("/form", SEND), base_url=site.base_url)
    dispatched: list[str] = []
    async with host.session(plan) as session:
        await session.open_tab(plan.tabs["site"], timeout_ms=EVENT_MS)
        for script in scripts:
            await session.page("site").evaluate(script)
        try:
            evidence = await session.perform(
                plan.step("send"), before_dispatch=lambda: dispatched.append("in flight")
            )
        except TargetMissing as exc:
            return dispatched, exc
        return dispatched, evidence


async def test_a_visible_submit_button_is_read_once_and_sent(host: Any, site: FixtureSite) -> None:
    dispatched, evidence = await _send(host, site)
    assert dispatched == ["in flight"]
    assert evidence[0].kind == "acted_on"
    assert evidence[0].found.startswith('button "Send" <button')


async def test_a_submit_button_that_shows_late_is_waited_for(host: Any, site: FixtureSite) -> None:
    dispatched, evidence = await _send(host, site, HIDE, SHOW_LATER)
    assert dispatched == ["in flight"]
    assert "submits form: POST" in evidence[0].found


async def test_a_hidden_submit_button_is_missing_and_nothing_is_in_flight(
    host: Any, site: FixtureSite
) -> None:
    dispatched, error = await _send(host, site, HIDE)
    assert isinstance(error, TargetMissing)
    assert dispatched == []  # the in-flight record is never asked for
