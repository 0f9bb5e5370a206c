"""Talking to ``northstar mcp`` as an MCP host does: the SDK's own client, a real process.

``exercise_programs`` is the conversation both transports must hold: list and describe the
programs, call ``contact-form`` three times against the fixture site with progress
notifications, read the run's status without a credential, and be refused a reconcile
with a wrong credential.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import CallToolResult

from fixtures.site_server import FixtureSite
from northstar.composition import load_compiled
from tests.conftest import RECIPES

# The console script's entry point, run by this interpreter (no PATH or activation needed).
ENTRY = "from northstar.__main__ import main; main()"
ERROR_LINE = re.compile(r"^error\[(?P<code>[A-Z_]+)\] (?P<body>.+) \(fix: (?P<fix>.+)\)$")
TOOLS = {
    "list_programs",
    "describe_program",
    "call_program",
    "run_status",
    "reconcile_run",
    "resume_run",
    "diagnose_run",
    "propose_fix",
}


def server_command(journal: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        ENTRY,
        "mcp",
        "--recipes",
        str(RECIPES),
        "--journal",
        str(journal),
        *extra,
    ]


def child_env() -> dict[str, str]:
    """Beyond the SDK's safe defaults: the browser to use, and no other NORTHSTAR_ setting."""
    keep = ("NORTHSTAR_BROWSER", "PLAYWRIGHT_BROWSERS_PATH")
    return {name: os.environ[name] for name in keep if os.environ.get(name)}


def data(result: CallToolResult) -> dict[str, Any]:
    """A successful answer: structured content, and the same data as its JSON text."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content


def refused(result: CallToolResult, code: str) -> re.Match[str]:
    """A tool error whose text is the CLI's one coded line, and no traceback."""
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text
    match = ERROR_LINE.match(text)
    assert match is not None, text
    assert match["code"] == code, text
    return match


async def exercise_programs(client: Client, site: FixtureSite) -> dict[str, Any]:
    """The conversation of the 'done when' list; returns the call's answer."""
    assert {tool.name for tool in (await client.list_tools()).tools} >= TOOLS

    listed = data(await client.call_tool("list_programs", {}))
    names = {program["name"]: program for program in listed["programs"]}
    assert names["contact-form"]["required"] == ["name"]
    assert names["contact-form"]["needs_base_url"] is True
    assert listed["problems"] == []

    described = data(await client.call_tool("describe_program", {"name": "contact-form"}))
    compiled = load_compiled(RECIPES / "contact-form.yaml")
    assert described["definition_hash"] == compiled.recipe_hash
    assert described["params"]["name"] == {
        "type": "string",
        "required": True,
        "description": "Sender name",
    }
    assert described["params"]["topic"]["choices"] == ["support", "sales", "billing"]
    assert described["tabs"] == {"site": {"start": "{{ base_url }}/form"}}
    assert len(described["steps"]) == len(compiled.recipe.steps)
    assert described["steps"][-1].startswith('send [site] click button "Send"; submit')
    assert set(described["outputs"]) == {"message_id", "confirmation"}
    assert described["done_when"] == ["[site] title {'contains': 'Thank'}"]

    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    call = data(
        await client.call_tool(
            "call_program",
            {
                "name": "contact-form",
                "params": {"name": "Ada Lovelace"},
                "repeat": 3,
                "base_url": site.base_url,
            },
            progress_callback=on_progress,
        )
    )
    assert call["status"] == "verified"
    assert (call["requested"], call["verified"], call["model_calls"]) == (3, 3, 0)
    iterations = call["iterations"]
    assert [i["iteration"] for i in iterations] == [1, 2, 3]
    for iteration in iterations:
        assert iteration["verified"] is True
        assert iteration["model_calls"] == 0
        assert iteration["evidence_count"] > 0
        assert iteration["outputs"]["confirmation"] == "Thank you"
        assert iteration["outputs"]["message_id"].isdigit()
    assert len({i["outputs"]["message_id"] for i in iterations}) == 3
    assert site.submission_count() == 3  # three real submissions reached the site
    assert progress == [(n, 3, f"iteration {n}: verified") for n in (1, 2, 3)]

    status = data(await client.call_tool("run_status", {"run_id": call["run_id"]}))
    assert (status["status"], status["requested"], status["verified"]) == ("verified", 3, 3)
    assert [i["outputs"] for i in status["iterations"]] == [i["outputs"] for i in iterations]
    assert "credential" not in status

    wrong = await client.call_tool(
        "reconcile_run",
        {
            "run_id": call["run_id"],
            "credential": "not-the-credential",
            "params": {"name": "Ada Lovelace"},
        },
    )
    refused(wrong, "CREDENTIALS_INVALID")
    return call
