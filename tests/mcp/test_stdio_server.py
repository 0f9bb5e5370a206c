"""``northstar mcp`` over stdio, as an MCP host starts it: a subprocess and the SDK's client.

The server drives its own headless Chromium against the fixture site; the test only
talks MCP to it and reads the journal file afterwards.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from fixtures.site_server import FixtureSite
from northstar import readers
from tests.mcp.conftest import child_env, data, exercise_programs, refused, server_command
from tests.mcp.exploration import assert_closed_by_the_server, explore_with_sessions

pytestmark = pytest.mark.browser


def stdio_server(tmp_path: Path) -> StdioServerParameters:
    command = server_command(tmp_path / "journal.db")
    return StdioServerParameters(
        command=command[0], args=command[1:], env=child_env(), cwd=str(tmp_path)
    )


async def test_programs_first_over_stdio(site: FixtureSite, tmp_path: Path) -> None:
    async with Client(stdio_server(tmp_path)) as client:
        call = await exercise_programs(client, site)

    # The same journaled run as `northstar run`: the readers see it, bound to the recipe.
    detail = readers.get_run(tmp_path / "journal.db", call["run_id"])
    assert detail.summary.recipe_name == "contact-form"
    assert [i.state for i in detail.iterations] == ["verified"] * 3
    credential_file = tmp_path / "runs" / call["run_id"] / "credential"
    assert credential_file.read_text() == call["credential"]


async def test_expected_errors_are_the_cli_line(site: FixtureSite, tmp_path: Path) -> None:
    async with Client(stdio_server(tmp_path)) as client:
        bounds = await client.call_tool(
            "call_program",
            {
                "name": "contact-form",
                "params": {"name": "Ada"},
                "repeat": 0,
                "base_url": site.base_url,
            },
        )
        refused(bounds, "REPEAT_OPTIONS_INVALID")
        missing = await client.call_tool(
            "call_program", {"name": "contact-form", "base_url": site.base_url}
        )
        assert "'name' is required" in refused(missing, "PARAM_MISSING")["body"]
        unknown = await client.call_tool("describe_program", {"name": "no-such-program"})
        refused(unknown, "USAGE_INVALID")
        outside = await client.call_tool(
            "call_program",
            {
                "name": "contact-form",
                "params": {"name": "Ada", "attachment": str(Path(__file__))},
                "base_url": site.base_url,
            },
        )
        refused(outside, "PARAM_INVALID")
        nothing = await client.call_tool("run_status", {"run_id": "r-000000000000"})
        refused(nothing, "JOURNAL_ERROR")  # no run was started, so there is no journal yet
        listed = data(await client.call_tool("list_programs", {}))
    assert site.submission_count() == 0  # none of these reached the site
    assert "contact-form" in {p["name"] for p in listed["programs"]}


async def test_an_agent_explores_with_sessions_over_stdio(
    site: FixtureSite, tmp_path: Path
) -> None:
    async with Client(stdio_server(tmp_path)) as client:
        explored = await explore_with_sessions(client, site)

    # The host closed stdin: the server closed the two sessions left open, and journaled them.
    assert_closed_by_the_server(tmp_path / "journal.db", explored)
    assert site.submission_count() == 1
