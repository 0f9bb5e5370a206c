"""The fences for an agent session, over MCP with the SDK's own client, in real Chromium.

A local file's content, a ``data:`` page, a file outside the folder given with ``--files``
and the value of a password field never come back in an answer: each row of the tables
below is one thing an agent (or a model that was talked into it) may try.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import CallToolResult

from fixtures.site_server import FixtureSite
from northstar.browser.settings import BrowserSettings
from northstar.mcp.server import ServerOptions, build_server, shared_state
from tests.conftest import RECIPES
from tests.mcp.conftest import refused
from tests.mcp.exploration import Agent, open_agent, told

pytestmark = pytest.mark.browser

MARKER = "fence-marker-5813"
PASSWORD = "Pw&#%+\\\"'-9x"


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    """The upload folder given to the server, a file in it, and a private file beside it."""
    uploads, private = tmp_path / "uploads", tmp_path / "private"
    uploads.mkdir()
    private.mkdir()
    (uploads / "note.txt").write_text("a note")
    (private / "secret.html").write_text(f"<h1>Private</h1><p>{MARKER}</p>")
    (uploads / "link.txt").symlink_to(private / "secret.html")
    return {"uploads": uploads, "private": private}


@asynccontextmanager
async def serving(journal: Path, files: Path | None) -> AsyncIterator[Client]:
    """``northstar mcp --files FILES`` in this process, and the SDK's client talking to it."""
    options = ServerOptions((RECIPES,), journal, BrowserSettings(), files=files)
    async with (
        shared_state(options) as (browser, explore),
        Client(build_server(options, browser, explore)) as connected,
    ):
        yield connected


def text_of(result: CallToolResult) -> str:
    return json.dumps([item.model_dump() for item in result.content]) + json.dumps(
        result.structured_content
    )


def scheme_urls(folders: dict[str, Path]) -> dict[str, str]:
    return {
        "file": (folders["private"] / "secret.html").as_uri(),
        "data": f"data:text/html,<p>{MARKER}</p>",
        "javascript": f"javascript:document.write('{MARKER}')",
        "view-source": "view-source:http://127.0.0.1:9/",
    }


async def test_an_agent_is_never_shown_a_page_that_is_not_http(
    tmp_path: Path, site: FixtureSite, folders: dict[str, Path]
) -> None:
    async with serving(tmp_path / "journal.db", folders["uploads"]) as client:
        agent, _ = await open_agent(client, f"{site.base_url}/form")
        for scheme, url in scheme_urls(folders).items():
            opening = await client.call_tool("open_session", {"tabs": {"main": {"start": url}}})
            refused(opening, "USAGE_INVALID")  # a session's tabs start at web pages only
            went = await agent.call("act", action="goto", value=url)
            refused(went, "SCHEME_BLOCKED")
            text, _ = told(await agent.call("observe", full=True))
            assert MARKER not in text_of(opening) + text_of(went) + text, scheme
            assert "Contact" in text, scheme  # still on its own page


async def upload(agent: Agent, path: str) -> CallToolResult:
    return await agent.call("act", action="upload", target={"label": "Attachment"}, value=path)


OUTSIDE = [
    "{private}/secret.html",  # an absolute path the model chose
    "../private/secret.html",  # out of the folder by `..`
    "link.txt",  # a link inside that points out
    "/etc/passwd",
]


async def test_an_agent_uploads_only_from_the_folder_it_was_given(
    tmp_path: Path, site: FixtureSite, folders: dict[str, Path]
) -> None:
    async with serving(tmp_path / "journal.db", folders["uploads"]) as client:
        agent, _ = await open_agent(client, f"{site.base_url}/form")
        for path in OUTSIDE:
            given = path.format(private=folders["private"])
            line = refused(await upload(agent, given), "PARAM_INVALID")
            assert given in line["body"]
        told(await upload(agent, "note.txt"))  # a file inside the folder goes
        await agent.act("fill", target={"label": "Name"}, value="Ada")
        await agent.act("check", target={"role": "checkbox", "name": "Agree to terms"})
        sent, _ = await agent.act("click", target={"role": "button", "name": "Send"}, submit=True)
    assert "Thank you" in sent
    (contact,) = site.submissions()
    assert contact["attachment_filename"] == "note.txt"


async def test_without_a_files_folder_an_agent_uploads_nothing(
    tmp_path: Path, site: FixtureSite, folders: dict[str, Path]
) -> None:
    async with serving(tmp_path / "journal.db", None) as client:
        agent, _ = await open_agent(client, f"{site.base_url}/form")
        line = refused(await upload(agent, str(folders["uploads"] / "note.txt")), "PARAM_INVALID")
    assert "no folder" in line["body"]


async def test_a_password_an_agent_typed_never_comes_back(
    tmp_path: Path, site: FixtureSite
) -> None:
    """The page repeats the password beside the field and then sends it in its URL."""
    async with serving(tmp_path / "journal.db", None) as client:
        agent, _ = await open_agent(client, f"{site.base_url}/login/echo")
        told(await agent.call("observe"))
        password = {"label": "Password"}
        sign_in = {"role": "button", "name": "Sign in"}
        answers = [
            await agent.call("act", action="fill", target=password, value=PASSWORD),
            await agent.call("observe", full=True),
            await agent.call("act", action="click", target=sign_in),
            await agent.call("observe", full=True),
        ]
    shown = "".join(text_of(answer) for answer in answers)
    assert "You typed [redacted]" in shown  # the page did repeat it
    assert "/login/echo?password=" in shown  # and did send it in the URL
    for form in (PASSWORD, json.dumps(PASSWORD)[1:-1], "Pw%26%23%25%2B"):
        assert form not in shown, form
