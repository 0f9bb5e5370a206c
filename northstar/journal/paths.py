"""Where the journal and a run's files live: the one rule for each, for writers and readers.

The journal: explicit argument, then ``NORTHSTAR_JOURNAL``, then the default. Either is a
file path (an SQLite journal, the embedded default) or a ``postgresql://`` URL (a journal
shared by workers on several machines). A run's files (outputs, screenshots, traces, its
credential) sit beside an SQLite journal in ``runs/RUN_ID/``; with a Postgres journal they
are kept on the machine that wrote them, in ``.northstar/runs/RUN_ID/`` under the current
directory. This module imports no writer, so the read-only commands may use it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from northstar.errors import JournalError

__all__ = [
    "DEFAULT_JOURNAL_PATH",
    "JOURNAL_ENV",
    "JournalTarget",
    "is_postgres_url",
    "redact_url",
    "refuse_not_regular",
    "resolve_journal",
    "resolve_journal_path",
    "run_artifacts_dir",
]

JOURNAL_ENV = "NORTHSTAR_JOURNAL"
DEFAULT_JOURNAL_PATH = Path(".northstar") / "journal.db"
_POSTGRES_SCHEMES = ("postgresql://", "postgres://")

# A file journal is a Path; a Postgres journal is its URL, kept as text (a Path would fold `//`).
JournalTarget = Path | str


def is_postgres_url(target: str | os.PathLike[str] | None) -> bool:
    return isinstance(target, str) and target.lower().startswith(_POSTGRES_SCHEMES)


def redact_url(url: str) -> str:
    """The URL without its password, for messages, logs and the journal's own records."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))


def resolve_journal(
    explicit: str | os.PathLike[str] | None, *, environ: Mapping[str, str] | None = None
) -> JournalTarget:
    """Like ``resolve_journal_path``, but a ``postgresql://`` URL is returned as it is."""
    if explicit is not None and is_postgres_url(str(explicit)):
        return str(explicit)
    if explicit is None:
        from_env = (os.environ if environ is None else environ).get(JOURNAL_ENV, "")
        if is_postgres_url(from_env):
            return from_env
    return resolve_journal_path(explicit, environ=environ)


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
        return _file(str(explicit))
    from_env = (os.environ if environ is None else environ).get(JOURNAL_ENV, "")
    if from_env:
        return _file(from_env)
    return DEFAULT_JOURNAL_PATH


def _file(given: str) -> Path:
    """A file journal's path; a URL here is refused (a Path would mangle it)."""
    if is_postgres_url(given):
        raise JournalError(
            f"this command keeps its journal in a file, not at {redact_url(given)}",
            fix="Pass --journal PATH (an SQLite file) to this command.",
        )
    return Path(given).expanduser()


def run_artifacts_dir(journal_path: str | os.PathLike[str], run_id: str) -> Path:
    """Where a run's outputs, screenshots, traces and credential file live (see above)."""
    if is_postgres_url(journal_path):
        return DEFAULT_JOURNAL_PATH.parent / "runs" / run_id
    return Path(journal_path).parent / "runs" / run_id


def refuse_not_regular(path: Path) -> None:
    """A journal path that is there but is no regular file (a FIFO, a device, a folder) is a
    ``JournalError`` at once: opening a FIFO would wait for a writer for ever."""
    try:
        mode = path.stat().st_mode
    except OSError:  # not there (or not reachable): opening it says why
        return
    if not stat.S_ISREG(mode):
        raise JournalError(
            f"the journal at {path} is not a regular file ({_kind(mode)})",
            path=str(path),
            fix="Pass --journal PATH (or NORTHSTAR_JOURNAL) naming a journal file or a new one.",
        )


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "a device")
