"""The exploration tools' wiring, in-process and without a browser: order, refusals, texts.

The sessions themselves are exercised in real Chromium over stdio and HTTP
(``tests/mcp/exploration.py``); here only what decides before a page is needed.
"""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from northstar.agent import SessionOpened
from northstar.browser.settings import BrowserSettings
from northstar.mcp.explore_tools import opened_text
from northstar.mcp.server import INSTRUCTIONS, ServerOptions, build_server, shared_state
from tests.conftest import RECIPES
from tests.mcp.conftest import TOOLS, refused
from tests.mcp.exploration import EXPLORE_TOOLS


def options(tmp_path: Path) -> ServerOptions:
    return ServerOptions((RECIPES,), tmp_path / "journal.db", BrowserSettings(executable="none"))


async def test_programs_come_first_and_a_call_before_any_session_launches_nothing(
    tmp_path: Path,
) -> None:
    async with shared_state(options(tmp_path)) as (browser, explore):
        server = build_server(options(tmp_path), browser, explore)
        async with Client(server) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert set(names) == TOOLS | set(EXPLORE_TOOLS)
            assert names[-len(EXPLORE_TOOLS) :] == EXPLORE_TOOLS
            session = {"session_id": "r-000000000000", "credential": "x", "tab": "main"}
            for tool, extra in [
                ("observe", {}),
                ("act", {"action": "click", "ref": "e1"}),
                ("check", {"check": {"url": "**"}}),
            ]:
                line = refused(await client.call_tool(tool, session | extra), "CREDENTIALS_INVALID")
                assert "no open agent session 'r-000000000000'" in line["body"]
            closing = {"session_id": "r-000000000000", "credential": "x"}
            refused(await client.call_tool("close_session", closing), "CREDENTIALS_INVALID")
            bad = await client.call_tool("open_session", {"tabs": {"main": {"start": "nope"}}})
            refused(bad, "USAGE_INVALID")  # checked before the browser: none was asked for
        assert not browser.started
    assert not (tmp_path / "journal.db").exists()


def test_the_instructions_put_programs_first_and_call_the_signal_advice() -> None:
    assert INSTRUCTIONS.index("list_programs") < INSTRUCTIONS.index("open_session")
    assert "only when no program fits" in INSTRUCTIONS
    assert "advice" in INSTRUCTIONS


def test_the_opening_answer_text_carries_the_credential() -> None:
    opened = SessionOpened(session_id="r-1", credential="c-secret", tabs={"main": "http://h/"})
    text = opened_text(opened)
    assert text.startswith(opened.text)
    assert "credential: c-secret" in text
