"""``northstar mcp``: serve the stored programs to an agent's MCP host (stdio or HTTP)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from northstar.browser.settings import BrowserSettings
from northstar.cli._options import configured_option, journal_option
from northstar.cli._output import expected_errors
from northstar.errors import UsageInvalid
from northstar.journal.paths import resolve_journal_path

__all__ = ["mcp"]


def _folders(given: tuple[str, ...]) -> tuple[Path, ...]:
    folders = tuple(Path(folder) for folder in given) or (Path("recipes"),)
    for folder in folders:
        if not folder.is_dir():
            raise UsageInvalid(
                f"--recipes {folder}: no such folder", fix="Pass a folder that holds recipes."
            )
    return folders


def _files_folder(given: str | None) -> Path | None:
    if given is None:
        return None
    if not Path(given).is_dir():
        raise UsageInvalid(
            f"--files {given}: no such folder", fix="Pass the folder agents may upload from."
        )
    return Path(given).resolve()


def _sdk_installed() -> None:
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise UsageInvalid(
            "the MCP SDK is not installed", fix="pip install 'northstar[mcp]'."
        ) from None


@click.command()
@click.option(
    "--recipes",
    "folders",
    multiple=True,
    type=click.Path(file_okay=False),
    help="A folder of recipes to offer (repeatable; default: recipes/).",
)
@journal_option
@click.option(
    "--http",
    "http_address",
    metavar="HOST:PORT",
    help="Serve streamable HTTP at HOST:PORT (port 0: a free one) instead of stdio.",
)
@click.option("--allow-remote", is_flag=True, help="Let --http listen on a non-loopback address.")
@click.option(
    "--files",
    "files",
    type=click.Path(file_okay=False),
    help="The folder an agent session may upload files from (default: none).",
)
@click.option("--project", default="default", show_default=True, help="Project runs bind.")
@click.option("--headed", is_flag=True, help="Show the browser window.")
@configured_option("--browser", setting="browser")
@click.option(
    "--state",
    type=click.Path(exists=True, dir_okay=False),
    help="A signed-in state saved by `northstar sign-in`: every context starts from it.",
)
def mcp(**options: Any) -> None:
    """Serve the recipes as MCP tools (stdio, or HTTP with a bearer token)."""
    with expected_errors():
        _sdk_installed()
        from northstar.mcp import http_access
        from northstar.mcp.server import ServerOptions, serve_http, serve_stdio

        settings = ServerOptions(
            folders=_folders(options["folders"]),
            journal_path=resolve_journal_path(options["journal"]),
            browser=BrowserSettings(
                executable=options["browser"],
                headless=not options["headed"],
                storage_state=options["state"],
            ),
            project=options["project"],
            files=_files_folder(options["files"]),
        )
        if options["http_address"] is None:
            asyncio.run(serve_stdio(settings))
            return
        address = http_access.parse_http_address(
            options["http_address"], allow_remote=options["allow_remote"]
        )
        token, generated = http_access.server_token()
        if generated:  # shown once, here; never logged
            click.echo(f"northstar mcp: bearer token (shown once): {token}", err=True)
        else:
            click.echo(f"northstar mcp: bearer token from ${http_access.TOKEN_ENV}", err=True)
        asyncio.run(serve_http(settings, address, token))
