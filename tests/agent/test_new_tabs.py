"""A popup an agent's action opens becomes a tab of the session, gated from its first request."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from fixtures.site_server import FixtureSite
from northstar.agent import AgentHost
from northstar.errors import OriginBlocked

pytestmark = pytest.mark.browser


async def test_a_new_tab_is_a_role_and_one_heading_elsewhere_is_refused_unsent(
    agents: AgentHost, site: FixtureSite, other: Any
) -> None:
    start = f"{site.base_url}/leave?to={quote(other.base_url + '/landing', safe='')}"
    opened = await agents.open_session({"main": {"start": start}})
    sid, key = opened.session_id, opened.credential
    await agents.observe(sid, key, "main")

    items = {"role": "link", "name": "Open items in a tab"}
    answer = await agents.act(sid, key, "main", "click", target=items)
    assert answer.tabs_opened == ["popup-1"]
    shown = await agents.observe(sid, key, "popup-1")
    assert shown.url == f"{site.base_url}/items?page=1"

    away = {"role": "link", "name": "Open the other origin in a tab"}
    with pytest.raises(OriginBlocked, match="outside the tab's origins; it was closed"):
        await agents.act(sid, key, "main", "click", target=away)
    assert other.requests() == []  # the gate refused its first request
    listed = await agents.tabs(sid, key)
    assert [(t["role"], t["opened_by"]) for t in listed.tabs] == [
        ("main", None),
        ("popup-1", "main"),
    ]
    await agents.close_session(sid, key)
