"""Options several commands share, kept apart so a reader command loads no run machinery.

A setting of the project configuration (``northstar.config``) is an option made by
``configured_option``: its value is resolved there (flag > environment > project file >
default) while click parses the command line, so a command reads one settled value.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from northstar.cli._output import EXIT_CODES, format_error
from northstar.config import SETTINGS, UNSET, Config, load_config
from northstar.errors import NorthstarError

__all__ = ["configured_option", "journal_option", "project_config", "remote_browser_options"]


def project_config(ctx: click.Context) -> Config:
    """The command's configuration: the project file is read once per command line."""
    meta = ctx.find_root().meta
    if "northstar.config" not in meta:
        meta["northstar.config"] = load_config()
    config: Config = meta["northstar.config"]
    return config


def _resolve(setting: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        given = UNSET if value is None or value == () else value
        try:
            return project_config(ctx).value(setting, given)
        except NorthstarError as exc:  # while parsing: no command body to catch it yet
            click.echo(format_error(exc), err=True)
            sys.exit(EXIT_CODES["bad_input"])

    return callback


def configured_option(*decls: str, setting: str, **attrs: Any) -> Callable[[Any], Any]:
    """A click option for a project setting: its help names the variable and the file key."""
    known = SETTINGS[setting]
    key = known.key.replace("lint.", "[lint] ")
    attrs["help"] = f"{attrs.get('help', known.help)} [env {known.env}; project file: {key}]"
    return click.option(*decls, default=None, callback=_resolve(setting), **attrs)


journal_option = configured_option("--journal", setting="journal")

remote_browser_options = [
    click.option(
        "--cdp-url",
        envvar="NORTHSTAR_CDP_URL",
        metavar="URL",
        help="Use the running Chromium at this DevTools URL (http://HOST:PORT) instead of "
        "launching one.",
    ),
    click.option(
        "--ws-endpoint",
        envvar="NORTHSTAR_WS_ENDPOINT",
        metavar="URL",
        help="Use a Playwright browser server (ws://HOST:PORT/) instead of launching a browser.",
    ),
]
"""Where a remote browser is; with either, Northstar connects and never closes the browser."""
