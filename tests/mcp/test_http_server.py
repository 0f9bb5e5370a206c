"""``northstar mcp --http`` in its own process: a bearer token, loopback, the SDK's client.

The server binds 127.0.0.1 on a free port (``--http 127.0.0.1:0``) and prints its URL and
its generated token once on stderr; the test reads both, is refused without the token,
then holds the same conversation as over stdio, and stops the server with SIGTERM.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from fixtures.site_server import FixtureSite
from northstar.journal import Journal
from tests.mcp.conftest import child_env, exercise_programs, server_command
from tests.mcp.exploration import assert_closed_by_the_server, explore_with_sessions

pytestmark = pytest.mark.browser

LISTENING = re.compile(r"^northstar mcp: listening on (?P<url>http://127\.0\.0\.1:\d+/mcp)$")
TOKEN = re.compile(r"^northstar mcp: bearer token \(shown once\): (?P<token>\S+)$")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux ``/proc``)."""
    found: list[int] = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in map(int, children.read_text().split()):
            found += [child, *descendants(child)]
    return found


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


@dataclass
class HttpServer:
    url: str
    token: str
    process: asyncio.subprocess.Process
    stderr: list[str]
    journal: Path


async def announced(process: asyncio.subprocess.Process) -> tuple[str, str, list[str]]:
    """Read stderr until the server printed its URL and token (the token comes first)."""
    assert process.stderr is not None
    lines: list[str] = []
    url = token = None
    while url is None:
        line = (await asyncio.wait_for(process.stderr.readline(), timeout=60)).decode()
        assert line, f"the server ended before listening: {lines}"
        lines.append(line.rstrip("\n"))
        if match := TOKEN.match(lines[-1]):
            token = match["token"]
        if match := LISTENING.match(lines[-1]):
            url = match["url"]
    assert token is not None, lines
    return url, token, lines


@pytest.fixture
async def http_server(tmp_path: Path) -> AsyncIterator[HttpServer]:
    command = server_command(tmp_path / "journal.db", "--http", "127.0.0.1:0")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")} | child_env()
    process = await asyncio.create_subprocess_exec(
        *command, cwd=tmp_path, env=env, stderr=asyncio.subprocess.PIPE
    )
    try:
        url, token, lines = await announced(process)
        yield HttpServer(url, token, process, lines, tmp_path / "journal.db")
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), timeout=30)


async def test_a_request_without_the_token_is_refused(http_server: HttpServer) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient() as http:
        anonymous = await http.post(http_server.url, json=INITIALIZE, headers=headers)
        wrong = await http.post(
            http_server.url,
            json=INITIALIZE,
            headers=headers | {"Authorization": "Bearer not-the-token"},
        )
        right = await http.post(
            http_server.url,
            json=INITIALIZE,
            headers=headers | {"Authorization": f"Bearer {http_server.token}"},
        )
    assert (anonymous.status_code, wrong.status_code) == (401, 401)
    assert anonymous.json()["error"] == "invalid_token"
    assert right.status_code == 200


async def test_sdk_client_without_the_token_cannot_connect(http_server: HttpServer) -> None:
    with pytest.raises(BaseExceptionGroup) as refused:
        async with Client(http_server.url) as client:
            await client.list_tools()
    # The SDK reports the 401 answer to its first request as an error response.
    assert refused.group_contains(MCPError, depth=2)


async def test_programs_first_over_http(http_server: HttpServer, site: FixtureSite) -> None:
    auth = {"Authorization": f"Bearer {http_server.token}"}
    async with httpx2.AsyncClient(headers=auth, timeout=120) as http:
        transport = streamable_http_client(http_server.url, http_client=http)
        async with Client(transport) as client:
            await exercise_programs(client, site)

    browser_processes = descendants(http_server.process.pid)
    assert browser_processes  # the driver and Chromium, launched on the first call
    http_server.process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(http_server.process.wait(), timeout=30) == 0
    assert http_server.process.stderr is not None
    rest = (await http_server.process.stderr.read()).decode()
    assert "Traceback" not in rest
    assert rest.count(http_server.token) == 0  # printed once, before listening; never again
    assert [pid for pid in browser_processes if alive(pid)] == []  # none outlives the server


async def test_an_agent_explores_with_sessions_over_http(
    http_server: HttpServer, site: FixtureSite
) -> None:
    auth = {"Authorization": f"Bearer {http_server.token}"}
    async with httpx2.AsyncClient(headers=auth, timeout=120) as http:
        transport = streamable_http_client(http_server.url, http_client=http)
        async with Client(transport) as client:
            explored = await explore_with_sessions(client, site)

    # The client is gone, its sessions are not: they close when the server stops.
    with Journal.open(http_server.journal) as journal:
        assert journal.run_record(explored.left_open).status == "running"
    http_server.process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(http_server.process.wait(), timeout=30) == 0
    assert_closed_by_the_server(http_server.journal, explored)
    assert site.submission_count() == 1
