"""The journal's one connection, its durability settings, and its error boundary.

The connection is SQLite's (the embedded default) or a ``PgConnection`` for a
``postgresql://`` journal (``northstar.journal.postgres``, which adapts the same SQL).
Every ``sqlite3`` or psycopg error the writer meets is converted to a ``JournalError``
here, with ``raise ... from exc``, so callers only ever see Northstar's error tree.

Durability: the connection runs in WAL mode with ``synchronous=NORMAL``. A commit is then
written to the WAL file before ``commit`` returns but not fsynced, which survives any
crash of the worker process (the OS still holds the pages); only a power loss or kernel
crash can drop the last commits. That makes each per-step commit cheap. The one record
that must survive even a power loss is "this submission is in flight", written before the
click: ``durable()`` raises the connection to ``synchronous=FULL`` for that commit, so the
WAL is fsynced before the browser is allowed to act. Postgres keeps the same trade-off
with ``synchronous_commit`` (see ``northstar.journal.postgres``).
"""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from northstar.errors import JournalError
from northstar.journal.paths import (
    DEFAULT_JOURNAL_PATH,
    JournalTarget,
    is_postgres_url,
    refuse_not_regular,
)
from northstar.journal.postgres import connect_postgres, pg_errors
from northstar.journal.schema import migrate

__all__ = [
    "BUSY_TIMEOUT_MS",
    "Clock",
    "Connection",
    "JournalDb",
    "sqlite_errors",
    "utc_now",
    "worker_identity",
]

Clock = Callable[[], datetime]
Params = tuple[Any, ...] | dict[str, Any]

# Long enough that a reader or a second writer waits out a checkpoint instead of failing.
BUSY_TIMEOUT_MS = 10_000


def utc_now() -> datetime:
    return datetime.now(UTC)


class Connection(Protocol):
    """What the journal calls on a connection: ``sqlite3.Connection`` or ``PgConnection``."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, rows: Any, /) -> object: ...

    @property
    def in_transaction(self) -> bool: ...

    def close(self) -> None: ...


@contextmanager
def sqlite_errors(action: str, **context: Any) -> Iterator[None]:
    """Convert ``sqlite3`` (and psycopg) errors to ``JournalError`` naming what we were doing."""
    try:
        yield
    except Exception as exc:  # the driver's errors are told apart only on this rare path
        if isinstance(exc, (sqlite3.Error, *pg_errors())):
            raise JournalError(f"could not {action}: {exc}", **context) from exc
        raise


class JournalDb:
    """A writer connection in autocommit mode; multi-statement writes use ``transaction``.

    ``path`` is the SQLite file, or for a Postgres journal the local anchor of its runs'
    files (``.northstar/journal.db``: they go to ``.northstar/runs/``); ``location`` is
    what to show a person (the path, or the URL without its password).
    """

    def __init__(self, conn: Connection, path: Path, now: Clock, location: str = "") -> None:
        self.conn = conn
        self.path = path
        self.location = location or str(path)
        self.postgres = not isinstance(conn, sqlite3.Connection)
        self._now = now
        self._durable = False

    @classmethod
    def open(cls, target: JournalTarget, now: Clock) -> JournalDb:
        """An SQLite file (``connect``) or, for a ``postgresql://`` URL, a Postgres database."""
        if not is_postgres_url(target):
            return cls.connect(Path(target), now)
        conn = connect_postgres(str(target))
        try:
            with sqlite_errors("prepare the journal", path=conn.url):
                migrate(conn, path=conn.url)
        except BaseException:
            conn.close()
            raise
        return cls(conn, DEFAULT_JOURNAL_PATH, now, conn.url)

    @classmethod
    def connect(cls, path: Path, now: Clock) -> JournalDb:
        """Open (creating) the file, migrate it, and switch it to WAL.

        Only a missing file is created, and it appears at ``path`` complete (built
        beside it and linked into place): so a file that is there but empty or shorter
        than its own header says was truncated, and is refused rather than replaced.
        """
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            refuse_not_regular(path)
            refuse_damaged(path)
            if not path.exists():
                _create(path)
        except OSError as exc:
            raise JournalError(
                f"cannot create the journal at {path}: {exc.strerror or exc}", path=str(path)
            ) from exc
        with sqlite_errors("open the journal", path=str(path)):
            conn = sqlite3.connect(
                path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=True
            )
        try:
            _configure(conn, path)
        except BaseException:
            conn.close()
            raise
        return cls(conn, path, now)

    def now(self) -> datetime:
        """The current time from the injected clock (the one the stamps are written with)."""
        return self._now()

    def stamp(self) -> str:
        """The current time as ISO 8601 text, from the injected clock."""
        return self._now().isoformat()

    def execute(self, action: str, sql: str, params: Params = ()) -> Any:
        """One statement, committed when it returns (autocommit) unless in a transaction."""
        with sqlite_errors(action):
            return self.conn.execute(sql, params)

    def one(self, sql: str, params: Params = ()) -> tuple[Any, ...] | None:
        with sqlite_errors("read the journal"):
            row: tuple[Any, ...] | None = self.conn.execute(sql, params).fetchone()
            return row

    @contextmanager
    def transaction(self, action: str, **context: Any) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` .. ``COMMIT``: all statements inside land together or not at all.

        IMMEDIATE takes the write lock up front, so a busy journal waits (busy_timeout)
        at the start instead of failing halfway through.
        """
        with sqlite_errors(action, **context):
            self.conn.execute("BEGIN" if self.postgres else "BEGIN IMMEDIATE")
            try:
                if self.postgres and self._durable:
                    self.conn.execute("SET LOCAL synchronous_commit = on")
                yield
            except BaseException:
                if self.conn.in_transaction:  # SQLite may have rolled back already
                    self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def durable(self) -> Iterator[None]:
        """Commits inside are fsynced (``synchronous=FULL``): they survive a power loss."""
        if self.postgres:  # the transactions inside commit with synchronous_commit = on
            self._durable = True
            try:
                yield
            finally:
                self._durable = False
            return
        with sqlite_errors("make the journal durable"):
            self.conn.execute("PRAGMA synchronous = FULL")
        try:
            yield
        finally:
            with sqlite_errors("restore the journal's sync mode"):
                self.conn.execute("PRAGMA synchronous = NORMAL")

    def close(self) -> None:
        with sqlite_errors("close the journal"):
            self.conn.close()


_SQLITE_MAGIC = b"SQLite format 3\x00"
_HEADER = 100


def refuse_damaged(path: Path) -> None:
    """A journal file that is empty, or shorter than its header says, is a ``JournalError``.

    The length check is made only with no ``-wal`` file beside it: a WAL may hold pages
    the main file does not have yet.
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            header = handle.read(_HEADER)
    except FileNotFoundError:
        return
    if size == 0:
        raise _damaged(path, "is empty (0 bytes)")
    if not header.startswith(_SQLITE_MAGIC):
        return  # not SQLite at all: SQLite's own error names it
    expected = _expected_size(header)
    wal = path.with_name(path.name + "-wal")
    if expected is not None and size < expected and not wal.exists():
        raise _damaged(path, f"is cut short ({size} of {expected} bytes)")


def _expected_size(header: bytes) -> int | None:
    """Page size times page count from an SQLite header, if the header vouches for it."""
    if len(header) < _HEADER or header[24:28] != header[92:96]:
        return None  # the in-header page count is stale (written by an old SQLite)
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    return page_size * int.from_bytes(header[28:32], "big")


def _damaged(path: Path, what: str) -> JournalError:
    return JournalError(
        f"the journal at {path} {what}: it was truncated, so its runs cannot be read",
        path=str(path),
        fix="Restore the journal from a backup, or move the file away to start a new journal.",
    )


def _create(path: Path) -> None:
    """A new, migrated journal at ``path``, which appears there complete or not at all."""
    fresh = path.with_name(f".{path.name}.{os.getpid()}.new")
    try:
        with sqlite_errors("create the journal", path=str(path)):
            conn = sqlite3.connect(fresh, isolation_level=None)
        try:
            _configure(conn, fresh)
        finally:
            conn.close()
        _link_new(fresh, path)
    finally:
        for leftover in (fresh, fresh.with_name(fresh.name + "-wal")):
            leftover.unlink(missing_ok=True)
        fresh.with_name(fresh.name + "-shm").unlink(missing_ok=True)


def _link_new(fresh: Path, path: Path) -> None:
    """Put ``fresh`` at ``path`` unless a file is there already (another process won)."""
    try:
        os.link(fresh, path)
    except FileExistsError:
        return
    except OSError:  # a file system without hard links: a rename, after one more look
        if not path.exists():
            os.replace(fresh, path)


def _configure(conn: sqlite3.Connection, path: Path) -> None:
    with sqlite_errors("prepare the journal", path=str(path)):
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn, path=str(path))
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(
                f"the journal at {path} cannot use WAL mode (got {mode!r})",
                path=str(path),
                fix="Put the journal on a local file system (WAL needs shared memory).",
            )
        conn.execute("PRAGMA synchronous = NORMAL")


def worker_identity() -> tuple[int, str]:
    """This process's pid and host, so a reader can tell whether the writer still lives."""
    return os.getpid(), socket.gethostname()
