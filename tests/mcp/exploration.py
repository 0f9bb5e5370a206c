"""The exploring half of an MCP conversation, held by both transports' tests.

``explore_with_sessions`` plays a scripted agent against the fixture site through the
SDK's client: it opens a session, is refused with a wrong credential, acts by reference,
gets STALE_REFERENCE and ORIGIN_BLOCKED, receives the loop signal on the counted menu,
submits the contact form twice and sees one submission, and leaves two sessions open
(one with an unknown submission) for the server's shutdown to close.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mcp import Client
from mcp.types import CallToolResult

from fixtures.site_server import FixtureSite
from northstar.journal import Journal
from tests.mcp.conftest import TOOLS, refused

EXPLORE_TOOLS = [
    "open_session",
    "observe",
    "act",
    "tabs",
    "check",
    "save_recipe",
    "close_session",
]
SIGNAL_LINE = "loop signal (advice only, nothing was blocked): "


@dataclass(frozen=True)
class Explored:
    """Sessions the conversation closed itself, and those it left for the server to close."""

    closed: str
    left_open: str
    left_unknown: str


def told(result: CallToolResult) -> tuple[str, dict[str, Any]]:
    """A successful agent answer: its text (what a model reads) and its fields."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    (content,) = result.content
    assert content.type == "text"
    return content.text, result.structured_content


def ref_of(text: str, label: str) -> str:
    """The reference on the first line of ``text`` that shows ``label``."""
    for line in text.splitlines():
        found = re.search(r"\[ref=([^\]]+)\]", line)
        if label in line and found:
            return found.group(1)
    raise AssertionError(f"no reference for {label} in:\n{text}")


class Agent:
    """A scripted agent's calls on one session, over an MCP client."""

    def __init__(self, client: Client, session_id: str, credential: str) -> None:
        self.client = client
        self.session = {"session_id": session_id, "credential": credential}

    async def call(self, tool: str, **arguments: Any) -> CallToolResult:
        return await self.client.call_tool(tool, {**self.session, "tab": "main", **arguments})

    async def act(self, action: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
        return told(await self.call("act", action=action, **arguments))


async def open_agent(client: Client, start: str) -> tuple[Agent, dict[str, Any]]:
    text, opened = told(
        await client.call_tool("open_session", {"tabs": {"main": {"start": start}}})
    )
    assert opened["credential"] in text  # a host that reads only text can still call again
    assert f"main ({start})" in text  # the tabs are in the text, not repeated as fields
    assert set(opened) == {"session_id", "credential"}
    return Agent(client, opened["session_id"], opened["credential"]), opened


async def loop_on_the_menu(agent: Agent) -> str:
    """Open and close the counted menu until an answer carries the loop signal."""
    text, _ = told(await agent.call("observe"))
    menu = ref_of(text, 'button "Menu"')
    text, shown = await agent.act("click", ref=menu)
    assert shown == {"changed": True}  # the tab stayed where it was: no page fields
    assert '~ button "Menu"' in text
    assert not text.startswith('tab "main"')  # nor the tab's header
    profile = ref_of(text, 'menuitem "Profile"')
    await agent.act("click", ref=menu)
    stale = refused(await agent.call("act", action="click", ref=profile), "STALE_REFERENCE")
    assert 'menuitem "Profile"' in stale["body"]

    signalled_at = None
    for toggle in range(3, 9):
        text, answer = await agent.act("click", ref=menu)
        if answer.get("signal") is not None:
            signalled_at = toggle
            break
    assert signalled_at is not None, "no loop signal after eight open/close clicks"
    assert signalled_at <= 6
    assert answer["changed"]  # advice: the click it rides on was performed
    assert text.splitlines()[-1] == SIGNAL_LINE + answer["signal"]["guidance"]
    assert answer["signal"]["kind"]
    assert answer["signal"]["repeated_actions"] >= 5
    return menu


async def submit_the_form_twice(agent: Agent, site: FixtureSite, base: str) -> None:
    """Leave the menu for the form; the same submitting call twice sends one message."""
    text, form = await agent.act("click", target={"role": "link", "name": "Contact form"})
    assert "signal" not in form  # a change of course clears the signal
    assert form["page"]["full"]
    assert form["page"]["url"] == f"{base}/form"
    await agent.act("fill", ref=ref_of(text, 'textbox "Name"'), value="Ada Lovelace")
    send = ref_of(text, 'button "Send"')
    text, sent = await agent.act("click", ref=send, submit=True)
    assert sent["dispatched"]
    assert "Message #1 received from Ada Lovelace" in text
    again_text, again = await agent.act("click", ref=send, submit=True)
    assert not again["dispatched"]
    assert "already done, not sent again" in again_text
    assert again["submission_key"] == sent["submission_key"]
    assert again["page"] == sent["page"]
    assert site.submission_count("contact") == 1
    _, held = told(await agent.call("check", check={"url": "**/form/thanks*"}))
    assert held["held"]


async def explore_with_sessions(client: Client, site: FixtureSite) -> Explored:
    """The 'done when' list of the exploration tools, over any transport."""
    names = [tool.name for tool in (await client.list_tools()).tools]
    assert set(EXPLORE_TOOLS) <= set(names)
    assert max(names.index(t) for t in TOOLS) < min(names.index(t) for t in EXPLORE_TOOLS)

    base = site.base_url
    agent, opened = await open_agent(client, f"{base}/menu/counter")
    wrong = {"session_id": opened["session_id"], "credential": "not-the-credential"}
    refusal = await client.call_tool(
        "act", {**wrong, "tab": "main", "action": "click", "ref": "e1"}
    )
    refused(refusal, "CREDENTIALS_INVALID")

    await loop_on_the_menu(agent)
    blocked = await agent.call("act", action="goto", value="http://example.invalid/")
    refused(blocked, "ORIGIN_BLOCKED")
    await submit_the_form_twice(agent, site, base)

    _, closed = told(await client.call_tool("close_session", agent.session))
    assert closed == {"session_id": opened["session_id"], "status": "stopped"}
    refused(await agent.call("observe"), "CREDENTIALS_INVALID")

    left_open, _ = await open_agent(client, f"{base}/form")
    unknown, _ = await open_agent(client, f"{base}/")
    sent = await unknown.call("act", action="goto", value="/form/thanks?id=7", submit=True)
    assert "NAVIGATION_FAILED" in refused(sent, "OUTCOME_UNKNOWN")["body"]
    return Explored(
        closed=opened["session_id"],
        left_open=left_open.session["session_id"],
        left_unknown=unknown.session["session_id"],
    )


def assert_closed_by_the_server(journal_path: Any, explored: Explored) -> None:
    """Sessions left open when the server stopped ended as the agent API ends them."""
    with Journal.open(journal_path) as journal:
        statuses = {
            sid: journal.run_record(sid).status
            for sid in (explored.closed, explored.left_open, explored.left_unknown)
        }
    assert statuses == {
        explored.closed: "stopped",
        explored.left_open: "stopped",
        explored.left_unknown: "blocked",
    }
