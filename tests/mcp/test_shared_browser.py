"""The server's one browser: launched once on first use, shared, and closed at shutdown."""

from __future__ import annotations

import asyncio

import pytest

from fixtures.site_server import FixtureSite
from northstar.browser.settings import BrowserSettings
from northstar.mcp.shared_browser import SharedBrowser
from northstar.run.runner import ProgramRunner
from tests.conftest import make_plan

pytestmark = pytest.mark.browser

PAGE = """
name: one-page
tabs:
  site: {start: "{{ base_url }}/form"}
steps:
  - {id: loaded, tab: site, wait_for: {visible: {label: Name}}}
"""


async def test_one_host_from_the_first_call_until_closed(site: FixtureSite) -> None:
    shared = SharedBrowser(BrowserSettings())
    assert not shared.started  # nothing launched before a call needs a page
    first, second = await asyncio.gather(shared.host(), shared.host())
    assert first is second
    plan = make_plan(PAGE, base_url=site.base_url)
    assert (await ProgramRunner(first).run_iteration(plan)).verified
    assert (await ProgramRunner(await shared.host()).run_iteration(plan)).verified

    await shared.aclose()
    assert not shared.started
    with pytest.raises(Exception, match="closed"):  # the adapter's own error; any will do
        async with first.session(plan):
            pass
