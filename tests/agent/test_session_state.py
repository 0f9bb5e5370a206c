"""An agent session started from a saved sign-in sees the login-walled members area.

Real Chromium against the fixture site's members listing, which redirects to the login
page when signed out; the server's login counter shows the session used the saved state
and did not sign in again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browser_adapters import PlaywrightHost
from fixtures._site_routes import DEMO_PASSWORD, DEMO_USERNAME
from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.agent import AgentHost
from northstar.browser.settings import BrowserSettings
from northstar.errors import UsageInvalid
from northstar.journal import Journal

pytestmark = pytest.mark.browser


async def save_signed_in_state(host: PlaywrightHost, site: FixtureSite, state: Path) -> None:
    """Sign in through the login page and save that context's storage state to ``state``."""
    context = await host.browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(f"{site.base_url}/login?next=/members/notes")
        await page.get_by_label("Username").fill(DEMO_USERNAME)
        await page.get_by_label("Password").fill(DEMO_PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url("**/members/notes")
        await context.storage_state(path=str(state))
    finally:
        await context.close()


async def listing_seen(agents: AgentHost, site: FixtureSite, **state: Any) -> str:
    """What a new session's first look at the members listing shows."""
    opened = await agents.open_session(
        {"main": {"start": f"{site.base_url}/members/notes"}}, **state
    )
    return (await agents.observe(opened.session_id, opened.credential, "main")).text


async def test_a_session_opened_with_a_state_file_sees_the_listing_signed_in(
    host: PlaywrightHost, site: FixtureSite, journal: Journal, tmp_path: Path
) -> None:
    state = tmp_path / "signed-in.json"
    await save_signed_in_state(host, site, state)

    async with AgentHost(host, journal) as agents:
        signed_in = await listing_seen(agents, site, state=state)
        signed_out = await listing_seen(agents, site)  # the same host, no state: the login page

    assert 'button "Log out"' in signed_in
    assert f"Signed in as {DEMO_USERNAME}" in signed_in
    assert 'button "Sign in"' in signed_out
    assert 'button "Log out"' not in signed_out
    assert site.login_count() == 1  # the helper's login: the session did not sign in again


async def test_without_a_state_a_session_starts_from_the_hosts_as_mcp_state_sets_it(
    host: PlaywrightHost, site: FixtureSite, journal: Journal, tmp_path: Path
) -> None:
    state = tmp_path / "signed-in.json"
    await save_signed_in_state(host, site, state)
    served = host.sharing_browser(BrowserSettings(storage_state=str(state)))  # `mcp --state`

    async with AgentHost(served, journal) as agents:
        assert 'button "Log out"' in await listing_seen(agents, site)


async def test_a_state_that_is_not_a_file_is_refused_before_a_context_opens(
    host: PlaywrightHost, site: FixtureSite, journal: Journal, tmp_path: Path
) -> None:
    async with AgentHost(host, journal) as agents:
        with pytest.raises(UsageInvalid, match="is not a file") as refused:
            await listing_seen(agents, site, state=tmp_path / "missing.json")
    assert "northstar sign-in" in (refused.value.fix or "")
    assert readers.list_runs(journal.path) == []  # no session was recorded
