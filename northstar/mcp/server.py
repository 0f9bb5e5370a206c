"""``northstar mcp``: the MCP server, over stdio or streamable HTTP, with one browser.

``build_server`` puts the tool groups on an ``MCPServer`` (the official SDK, 2.x); each
group is a module with its own ``register_tools(server, ...)``. ``serve`` runs it on
stdio (the default: the MCP host starts the process and talks over its stdin/stdout, so
nothing else may write to stdout) or on streamable HTTP behind a bearer token
(``northstar.mcp.http_access``). On the way out it closes the agent sessions still open
(their runs end ``stopped``, or ``blocked``), then the server's one browser.
"""

from __future__ import annotations

import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

from northstar.agent.settings import AgentSettings
from northstar.browser.settings import BrowserSettings
from northstar.mcp import diagnosis_tools, explore_tools, fix_tools, program_tools, status_tools
from northstar.mcp.explore_tools import ExploreSettings, ExploreTools
from northstar.mcp.http_access import HttpAddress, StaticTokenVerifier
from northstar.mcp.program_tools import ProgramSettings, ProgramTools
from northstar.mcp.shared_browser import SharedBrowser

__all__ = [
    "HTTP_PATH",
    "ServerOptions",
    "build_server",
    "serve_http",
    "serve_stdio",
    "shared_state",
]

HTTP_PATH = "/mcp"

INSTRUCTIONS = (
    "Northstar runs stored browser programs (recipes) and verifies every iteration. "
    "Programs first: list_programs, describe_program, then call_program when one fits; "
    "keep the run's credential to reconcile_run or resume_run a blocked run; "
    "run_status reads any run. "
    "When a stored program breaks (a target missing or ambiguous, an expectation failed): "
    "diagnose_run, then propose_fix with the repaired recipe; a person applies it. "
    "Explore only when no program fits: open_session (keep its session_id and credential), "
    "observe a tab, act on a [ref=...] of its latest observation or a target "
    "(submit: true for anything that sends or saves: it is sent at most once), "
    "check what should hold, save_recipe to keep what worked as a program, "
    "close_session when done. "
    "A loop signal on an answer is advice that you repeat yourself without progress: "
    "change course; it blocked nothing and decides nothing."
)


@dataclass(frozen=True)
class ServerOptions:
    folders: tuple[Path, ...]
    journal_path: Path
    browser: BrowserSettings
    project: str = "default"
    files: Path | None = None  # the folder agent sessions upload from (--files); none: nothing


@asynccontextmanager
async def shared_state(options: ServerOptions) -> AsyncIterator[tuple[SharedBrowser, ExploreTools]]:
    """The server's browser and the agent sessions on it; on every way out the sessions
    close first (journaled), while the browser they live in is still there."""
    browser = SharedBrowser(options.browser)
    recipes = options.folders[0] if options.folders else Path("recipes")
    agent = AgentSettings(files_dir=options.files)
    settings = ExploreSettings(options.journal_path, options.project, agent, recipes=recipes)
    explore = ExploreTools(settings, browser)
    try:
        yield browser, explore
    finally:
        try:
            await explore.aclose()
        finally:
            await browser.aclose()


def build_server(
    options: ServerOptions,
    browser: SharedBrowser,
    explore: ExploreTools,
    *,
    token: str | None = None,
    url: str = "",
) -> MCPServer[Any]:
    """The server with every tool group registered, programs first (an agent's host lists
    tools in this order); ``token`` puts it behind bearer auth."""
    auth: dict[str, Any] = {}
    if token is not None:
        # The SDK wants an issuer; with no resource metadata route it is published nowhere.
        settings = AuthSettings(issuer_url=url, resource_server_url=None)
        auth = {"auth": settings, "token_verifier": StaticTokenVerifier(token)}
    server: MCPServer[Any] = MCPServer(
        "northstar", instructions=INSTRUCTIONS, log_level="WARNING", **auth
    )
    programs = ProgramSettings(options.folders, options.journal_path, options.project)
    program_tools.register_tools(server, ProgramTools(programs, browser))
    status_tools.register_tools(server, journal_path=options.journal_path)
    diagnosis_tools.register_tools(server, journal_path=options.journal_path)
    fix_tools.register_tools(server, journal_path=options.journal_path, browser=browser)
    explore_tools.register_tools(server, explore)
    return server


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


async def serve_stdio(options: ServerOptions) -> None:
    """Serve one MCP host over stdin/stdout until it closes them, or SIGINT/SIGTERM."""
    async with shared_state(options) as (browser, explore), anyio.create_task_group() as tasks:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(*STOP_SIGNALS) as received:
                async for _ in received:
                    tasks.cancel_scope.cancel()

        tasks.start_soon(stop_on_signal)
        await build_server(options, browser, explore).run_stdio_async()
        tasks.cancel_scope.cancel()


@contextmanager
def _quiet_after_uvicorn() -> Iterator[None]:
    """uvicorn stops on SIGINT/SIGTERM, then raises the signal again for the handler it
    found; a no-op one lets the browser close and the process end normally (exit 0)."""
    previous = {sig: signal.signal(sig, lambda signum, frame: None) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _listening_socket(address: HttpAddress) -> socket.socket:
    """Bound and listening before the server starts, so port 0 is a free port known in
    advance and a client that connects as soon as the address is announced waits in the
    backlog instead of being refused while the web server is still starting."""
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((address.host, address.port))
    sock.listen()
    return sock


async def serve_http(
    options: ServerOptions,
    address: HttpAddress,
    token: str,
    announce: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> None:
    """Serve streamable HTTP at ``address`` until SIGINT/SIGTERM; every request needs the token."""
    import uvicorn  # only the HTTP transport needs the web server

    sock = _listening_socket(address)
    bound = HttpAddress(address.host, sock.getsockname()[1])
    async with shared_state(options) as (browser, explore):
        server = build_server(options, browser, explore, token=token, url=bound.url())
        app = server.streamable_http_app(host=bound.host)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        announce(f"northstar mcp: listening on {bound.url(HTTP_PATH)}")
        try:
            with _quiet_after_uvicorn():
                await uvicorn.Server(config).serve(sockets=[sock])
        finally:
            sock.close()
