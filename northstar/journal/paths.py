"""Where the journal and a run's files live: the one rule for each, for writers and readers.

The journal: explicit argument, then ``NORTHSTAR_JOURNAL``, then the default. A run's
files (outputs, screenshots, traces, its credential) sit beside the journal in
``runs/RUN_ID/``. This module imports no writer, so the read-only commands may use it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from northstar.errors import JournalError

__all__ = ["DEFAULT_JOURNAL_PATH", "JOURNAL_ENV", "resolve_journal_path", "run_artifacts_dir"]

JOURNAL_ENV = "NORTHSTAR_JOURNAL"
DEFAULT_JOURNAL_PATH = Path(".northstar") / "journal.db"


def resolve_journal_path(
    explicit: str | os.PathLike[str] | None, *, environ: Mapping[str, str] | None = None
) -> Path:
    """The journal file to use: ``explicit`` > ``$NORTHSTAR_JOURNAL`` > ``.northstar/journal.db``.

    ``None`` means "not given"; an explicit empty string is a mistake, not a request for
    the default. An empty environment variable counts as unset, as shells make it easy
    to export one by accident. A relative path stays relative to the current directory.
    """
    if explicit is not None:
        if not str(explicit):
            raise JournalError("the journal path is empty", fix="Pass --journal PATH or omit it.")
        return Path(explicit).expanduser()
    from_env = (os.environ if environ is None else environ).get(JOURNAL_ENV, "")
    if from_env:
        return Path(from_env).expanduser()
    return DEFAULT_JOURNAL_PATH


def run_artifacts_dir(journal_path: str | os.PathLike[str], run_id: str) -> Path:
    """Where a run's outputs, screenshots, traces and credential file live: beside the journal."""
    return Path(journal_path).parent / "runs" / run_id
