"""Options several commands share, kept apart so a reader command loads no run machinery."""

from __future__ import annotations

import click

from northstar.journal.paths import JOURNAL_ENV

__all__ = ["journal_option", "remote_browser_options"]

journal_option = click.option(
    "--journal",
    envvar=JOURNAL_ENV,
    help="Journal: a file (.northstar/journal.db) or a postgresql:// URL.",
)

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
