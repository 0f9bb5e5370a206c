"""Options several commands share, kept apart so a reader command loads no run machinery."""

from __future__ import annotations

import click

from northstar.journal.paths import JOURNAL_ENV

__all__ = ["journal_option"]

journal_option = click.option(
    "--journal",
    envvar=JOURNAL_ENV,
    help="Journal: a file (.northstar/journal.db) or a postgresql:// URL.",
)
