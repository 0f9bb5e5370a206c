"""``save_recipe`` over MCP: a scripted agent's session becomes a program the server offers.

The SDK's client talks to ``northstar mcp`` in a process of its own (stdio), whose
``--recipes`` folder is the test's: the agent explores the counted menu, submits the
contact form twice (one submission), saves the session, finds it in ``list_programs``
and calls it three times with a fresh value: three verified iterations, no model calls,
three more submissions on the fixture site.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from fixtures.site_server import FixtureSite
from tests.mcp.conftest import ENTRY, child_env, data, refused
from tests.mcp.exploration import open_agent, ref_of, submit_the_form_twice, told

pytestmark = pytest.mark.browser


def stdio_server(tmp_path: Path) -> StdioServerParameters:
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    args = ["-c", ENTRY, "mcp", "--recipes", str(recipes), "--journal", str(tmp_path / "j.db")]
    return StdioServerParameters(
        command=sys.executable, args=args, env=child_env(), cwd=str(tmp_path)
    )


async def test_an_agent_saves_its_session_and_calls_it_as_a_program(
    site: FixtureSite, tmp_path: Path
) -> None:
    base = site.base_url
    async with Client(stdio_server(tmp_path)) as client:
        agent, opened = await open_agent(client, f"{base}/menu/counter")
        text, _ = told(await agent.call("observe"))
        menu = ref_of(text, 'button "Menu"')
        await agent.act("click", ref=menu)
        await agent.act("click", ref=menu)
        await submit_the_form_twice(agent, site, base)  # asserts one submission

        saving = {**agent.session, "name": "form-over-mcp", "params": {"name": "sender"}}
        text, saved = told(await client.call_tool("save_recipe", saving))
        assert saved["path"] == str(tmp_path / "recipes" / "form-over-mcp.yaml")
        assert saved["yaml"] in text
        assert saved["params"] == {"sender": "default"}
        assert Path(saved["path"]).read_text(encoding="utf-8") == saved["yaml"]
        doc = yaml.safe_load(saved["yaml"])
        assert [step["id"] for step in doc["steps"]] == [
            "click-menu",
            "click-menu-2",
            "click-contact-form",
            "fill-name",
            "click-send",
        ]
        assert doc["steps"][3]["fill"]["value"] == "{{ sender }}"
        assert doc["steps"][-1]["effect"] == "submit"
        refused(await client.call_tool("save_recipe", saving), "USAGE_INVALID")  # exists

        listed = data(await client.call_tool("list_programs", {}))
        assert [p["name"] for p in listed["programs"]] == ["form-over-mcp"]
        described = data(await client.call_tool("describe_program", {"name": "form-over-mcp"}))
        assert described["definition_hash"] == saved["definition_hash"]

        call = data(
            await client.call_tool(
                "call_program",
                {
                    "name": "form-over-mcp",
                    "params": {"sender": "Grace Hopper"},
                    "repeat": 3,
                    "base_url": base,
                },
            )
        )
        _, closed = told(await client.call_tool("close_session", agent.session))
    assert closed == {"session_id": opened["session_id"], "status": "stopped"}
    assert (call["status"], call["requested"], call["verified"]) == ("verified", 3, 3)
    assert call["model_calls"] == 0
    assert site.submission_count() == 4
    assert [s["name"] for s in site.submissions()].count("Grace Hopper") == 3
