"""The journal's tables, their vocabulary, and the migrations that build them.

The schema is versioned with ``PRAGMA user_version`` (on Postgres: the ``version`` of the
table ``northstar_journal``): migration ``i`` of ``MIGRATIONS`` takes a journal from
version ``i`` to ``i + 1``. Opening an older journal applies the missing migrations in
order, each in its own transaction (``BEGIN IMMEDIATE``; on Postgres an advisory lock), so
two processes opening the same journal at once cannot both apply one. A journal written by
a newer Northstar is refused rather than guessed at. One list of migrations serves both
databases: ``northstar.journal.postgres`` adapts the DDL.

To change the schema, append a migration; never edit one that has shipped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

from northstar.errors import JournalError
from northstar.journal.postgres import (
    PgConnection,
    pg_is_northstar,
    pg_lock_for_migration,
    pg_set_version,
    pg_unlock_after_migration,
    pg_version,
)

__all__ = [
    "APPLICATION_ID",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Migration",
    "RunStatus",
    "StepEvent",
    "SubmissionState",
    "migrate",
    "schema_version",
]

# Takes an ``sqlite3.Connection`` or a ``PgConnection``: both have ``execute(sql, params)``.
Migration = Callable[[Any], None]
Conn = sqlite3.Connection | PgConnection

# "NSTR": marks the SQLite file as a Northstar journal, so a stranger's database is not migrated.
APPLICATION_ID = 0x4E535452


class RunStatus(StrEnum):
    """A run's status; everything but ``running`` is final for the worker that wrote it.

    ``blocked`` is the run's own (an unknown outcome waits for reconcile); the others are
    the states its iterations can leave it in (``IterationState``).
    """

    RUNNING = "running"
    BLOCKED = "blocked"
    VERIFIED = "verified"
    FAILED = "failed"
    NEEDS_REVIEW = "needs_review"
    UNKNOWN = "unknown"
    STOPPED = "stopped"


class StepEvent(StrEnum):
    """A transition of one step, in the order they can happen."""

    STARTED = "started"
    IN_FLIGHT = "in_flight"
    DISPATCHED = "dispatched"
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class SubmissionState(StrEnum):
    """Where a submission (a step with ``effect: submit``) stands."""

    IN_FLIGHT = "in_flight"
    DISPATCHED = "dispatched"
    VERIFIED = "verified"
    FAILED = "failed"
    UNKNOWN = "unknown"


def _one_of(column: str, values: type[StrEnum]) -> str:
    allowed = ", ".join(f"'{v.value}'" for v in values)
    return f"CHECK ({column} IN ({allowed}))"


_ITERATION_STATES = (
    "'pending', 'running', 'verified', 'failed', 'needs_review', 'unknown', 'stopped'"
)

_V1 = (
    f"PRAGMA application_id = {APPLICATION_ID}",
    f"""CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        recipe_path TEXT NOT NULL,
        recipe_name TEXT NOT NULL,
        definition_hash TEXT NOT NULL,
        project TEXT NOT NULL,
        profile TEXT NOT NULL,
        params_fingerprint TEXT NOT NULL,
        credential_hash TEXT NOT NULL,
        total_iterations INTEGER NOT NULL CHECK (total_iterations >= 0),
        options_json TEXT NOT NULL DEFAULT '{{}}',
        status TEXT NOT NULL {_one_of("status", RunStatus)},
        worker_pid INTEGER,
        worker_host TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        heartbeat_at TEXT
    )""",
    "CREATE INDEX runs_by_start ON runs (started_at)",
    f"""CREATE TABLE iterations (
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        number INTEGER NOT NULL CHECK (number >= 1),
        state TEXT NOT NULL CHECK (state IN ({_ITERATION_STATES})),
        lane INTEGER,
        params_fingerprint TEXT NOT NULL,
        started_at TEXT,
        ended_at TEXT,
        duration_ms REAL,
        reason_code TEXT,
        reason TEXT,
        failing_step TEXT,
        evidence_count INTEGER NOT NULL DEFAULT 0,
        model_calls INTEGER,
        PRIMARY KEY (run_id, number)
    )""",
    """CREATE TABLE steps (
        run_id TEXT NOT NULL,
        iteration INTEGER NOT NULL,
        step_id TEXT NOT NULL,
        tab TEXT NOT NULL,
        kind TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (run_id, iteration, step_id),
        FOREIGN KEY (run_id, iteration) REFERENCES iterations (run_id, number)
    )""",
    f"""CREATE TABLE step_events (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        iteration INTEGER NOT NULL,
        step_id TEXT NOT NULL,
        event TEXT NOT NULL {_one_of("event", StepEvent)},
        at TEXT NOT NULL,
        duration_ms REAL,
        evidence_json TEXT,
        error_json TEXT,
        FOREIGN KEY (run_id, iteration, step_id) REFERENCES steps (run_id, iteration, step_id)
    )""",
    "CREATE INDEX step_events_by_step ON step_events (run_id, iteration, step_id)",
    """CREATE TABLE outputs (
        run_id TEXT NOT NULL,
        iteration INTEGER NOT NULL,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, iteration, name),
        FOREIGN KEY (run_id, iteration) REFERENCES iterations (run_id, number)
    )""",
    f"""CREATE TABLE submissions (
        idempotency_key TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        iteration INTEGER NOT NULL,
        step_id TEXT NOT NULL,
        input_fingerprint TEXT NOT NULL,
        state TEXT NOT NULL {_one_of("state", SubmissionState)},
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX submissions_by_run ON submissions (run_id, iteration)",
    """CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        at TEXT NOT NULL,
        name TEXT NOT NULL,
        payload_json TEXT NOT NULL DEFAULT '{}'
    )""",
    "CREATE INDEX events_by_run ON events (run_id, id)",
)


def _statements(*sql: str) -> Migration:
    """A migration made of plain SQL statements, run one by one inside its transaction."""

    def apply(conn: Conn) -> None:
        for statement in sql:
            conn.execute(statement)

    return apply


# v2: how often a step was attempted, and the retry policy it ran under (shown by `show`).
_V2 = (
    "ALTER TABLE steps ADD COLUMN retry_json TEXT",
    "ALTER TABLE step_events ADD COLUMN attempts INTEGER",
)

# v3: when a submission was last sent (its settle period counts from there), the URL its
# tab showed once verified (where a resume continues), and who settled it (probe, person).
_V3 = (
    "ALTER TABLE submissions ADD COLUMN sent_at TEXT",
    "ALTER TABLE submissions ADD COLUMN result_url TEXT",
    "ALTER TABLE submissions ADD COLUMN decided_by TEXT",
    "UPDATE submissions SET sent_at = updated_at",
)

# v4: when a recipe breaks. A compact observation of a step's tab taken before its action,
# once per recipe step per run when it passes (the baseline a later failure is compared
# with); the diagnosis of a step that failed on its target or an expectation; and fixes
# an agent proposed for a person to review (the diff, and the text it leads to).
_V4 = (
    """CREATE TABLE step_baselines (
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        step_id TEXT NOT NULL,
        iteration INTEGER NOT NULL,
        tab TEXT NOT NULL,
        observation_json TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (run_id, step_id)
    )""",
    """CREATE TABLE diagnoses (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        iteration INTEGER NOT NULL,
        step_id TEXT NOT NULL,
        code TEXT NOT NULL,
        at TEXT NOT NULL,
        diagnosis_json TEXT NOT NULL
    )""",
    "CREATE INDEX diagnoses_by_run ON diagnoses (run_id, id)",
    """CREATE TABLE fix_proposals (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        recipe_path TEXT NOT NULL,
        base_sha256 TEXT NOT NULL,
        diff TEXT NOT NULL,
        proposed_text TEXT NOT NULL,
        lines_added INTEGER NOT NULL,
        lines_removed INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        applied_at TEXT,
        applied_hash TEXT
    )""",
)

# v5: positive controls of reconcile probes. After a submission of a recipe was verified,
# its probe is run once, read-only, and must find that known effect; the last control per
# definition hash, base URL and submit step says whether the probe can prove an absence.
_V5 = (
    """CREATE TABLE probe_controls (
        definition_hash TEXT NOT NULL,
        base_url TEXT NOT NULL,
        step_id TEXT NOT NULL,
        proven INTEGER NOT NULL,
        run_id TEXT NOT NULL,
        iteration INTEGER NOT NULL,
        detail TEXT NOT NULL,
        checked_at TEXT NOT NULL,
        PRIMARY KEY (definition_hash, base_url, step_id)
    )""",
)

# v6: the values each iteration ran with (its row), secrets already replaced, as a JSON
# object: ``show``, the report, ``--json`` and the CI results name the row. NULL for an
# iteration written before this version, or by a front end that has no row (an agent).
_V6 = ("ALTER TABLE iterations ADD COLUMN row_json TEXT",)

MIGRATIONS: tuple[Migration, ...] = (
    _statements(*_V1),
    _statements(*_V2),
    _statements(*_V3),
    _statements(*_V4),
    _statements(*_V5),
    _statements(*_V6),
)
SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(conn: Conn) -> int:
    """The journal's version (0 for a database no migration has touched)."""
    if isinstance(conn, PgConnection):
        return pg_version(conn)
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def migrate(conn: Conn, *, path: str = "", migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply the migrations ``conn``'s journal lacks; return the version it ends at.

    ``conn`` must be in autocommit mode (``isolation_level=None``): each migration
    commits on its own, so a failure leaves the journal at the last good version.
    """
    target = len(migrations)
    with _migration_lock(conn):  # Postgres: the check too, so it never sees half a migration
        while (version := _check_version(conn, path, target)) < target:
            _apply(conn, version, migrations[version])
    return target


def _apply(conn: Conn, version: int, migration: Migration) -> None:
    conn.execute("BEGIN" if isinstance(conn, PgConnection) else "BEGIN IMMEDIATE")
    try:
        # Re-read inside the write lock: another process may have migrated meanwhile.
        if schema_version(conn) == version:
            migration(conn)
            _set_version(conn, version + 1)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may have rolled back already
            conn.execute("ROLLBACK")
        raise


@contextmanager
def _migration_lock(conn: Conn) -> Iterator[None]:
    """Postgres: a session lock taken before BEGIN, so the transaction sees the winner's tables."""
    if not isinstance(conn, PgConnection):
        yield  # BEGIN IMMEDIATE is SQLite's lock
        return
    pg_lock_for_migration(conn, APPLICATION_ID)
    try:
        yield
    finally:
        pg_unlock_after_migration(conn, APPLICATION_ID)


def _set_version(conn: Conn, version: int) -> None:
    if isinstance(conn, PgConnection):
        pg_set_version(conn, version, APPLICATION_ID)
    else:
        conn.execute(f"PRAGMA user_version = {version}")


def _check_version(conn: Conn, path: str, target: int) -> int:
    version = schema_version(conn)
    if version > target:
        raise JournalError(
            f"the journal at {path or '?'} has schema version {version}; "
            f"this Northstar reads up to version {target}",
            path=path or None,
            fix="Upgrade Northstar, or point --journal / NORTHSTAR_JOURNAL at another file.",
        )
    if not _is_northstar_file(conn, version):
        raise JournalError(
            f"{path or 'the file'} is a database but not a Northstar journal",
            path=path or None,
            fix="Point --journal / NORTHSTAR_JOURNAL at a new file or an existing journal.",
        )
    return version


def _is_northstar_file(conn: Conn, version: int) -> bool:
    """A journal carries our application id; an untouched file has no tables yet."""
    if isinstance(conn, PgConnection):
        return pg_is_northstar(conn, version, APPLICATION_ID)
    if version > 0:
        return int(conn.execute("PRAGMA application_id").fetchone()[0]) == APPLICATION_ID
    return int(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]) == 0
