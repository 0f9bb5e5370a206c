"""Schema creation, versioning and migration of the journal file."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from northstar.errors import JournalError
from northstar.journal import SCHEMA_VERSION, Journal
from northstar.journal.schema import MIGRATIONS, migrate, schema_version

from .helpers import create_run

TABLES = {"runs", "iterations", "steps", "step_events", "outputs", "submissions", "events"}
TABLES |= {"step_baselines", "diagnoses", "fix_proposals"}  # v4: when a recipe breaks
TABLES |= {"probe_controls"}  # v5: positive controls of reconcile probes


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name for (name,) in rows}


def user_version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def test_a_fresh_journal_gets_every_table_at_the_current_version(journal_path: Path) -> None:
    Journal.open(journal_path).close()
    assert journal_path.parent.is_dir()
    assert tables(journal_path) == TABLES
    assert user_version(journal_path) == SCHEMA_VERSION


def test_the_journal_is_in_wal_mode_with_normal_sync(sqlite_journal: Journal) -> None:
    conn = sqlite_journal._db.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000


def test_reopening_is_idempotent_and_keeps_the_data(journal_path: Path) -> None:
    with Journal.open(journal_path) as first:
        run_id, _ = create_run(first)
    for _ in range(2):
        Journal.open(journal_path).close()
    assert user_version(journal_path) == SCHEMA_VERSION
    with sqlite3.connect(journal_path) as conn:
        assert conn.execute("SELECT run_id FROM runs").fetchall() == [(run_id,)]


def test_an_sqlite_file_with_no_tables_is_migrated(journal_path: Path) -> None:
    journal_path.parent.mkdir(parents=True)
    with sqlite3.connect(journal_path) as conn:  # user_version 0, a header and no tables
        conn.execute("CREATE TABLE scratch (x)")
        conn.execute("DROP TABLE scratch")
    Journal.open(journal_path).close()
    assert tables(journal_path) == TABLES
    assert user_version(journal_path) == SCHEMA_VERSION


def test_an_empty_file_is_refused_not_replaced(journal_path: Path) -> None:
    journal_path.parent.mkdir(parents=True)
    journal_path.write_bytes(b"")  # a journal truncated to nothing
    with pytest.raises(JournalError, match="is empty") as caught:
        Journal.open(journal_path)
    assert caught.value.code == "JOURNAL_ERROR"
    assert "backup" in caught.value.fix
    assert journal_path.read_bytes() == b""  # not silently re-created


def test_a_journal_cut_short_is_refused(journal_path: Path) -> None:
    with Journal.open(journal_path) as journal:
        for _ in range(20):
            create_run(journal)
    whole = journal_path.read_bytes()
    assert not journal_path.with_name("journal.db-wal").exists()  # checkpointed on close
    journal_path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(JournalError, match="cut short"):
        Journal.open(journal_path)


def test_a_new_journal_leaves_nothing_beside_it(journal_path: Path) -> None:
    Journal.open(journal_path).close()
    assert sorted(p.name for p in journal_path.parent.iterdir()) == ["journal.db"]


def test_a_journal_from_a_newer_northstar_is_refused(journal_path: Path) -> None:
    Journal.open(journal_path).close()
    with sqlite3.connect(journal_path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(JournalError, match="schema version") as caught:
        Journal.open(journal_path)
    assert caught.value.code == "JOURNAL_ERROR"
    assert "Upgrade Northstar" in caught.value.fix


def test_a_foreign_sqlite_database_is_not_touched(journal_path: Path) -> None:
    journal_path.parent.mkdir(parents=True)
    with sqlite3.connect(journal_path) as conn:
        conn.execute("CREATE TABLE mine (x)")
    with pytest.raises(JournalError, match="not a Northstar journal"):
        Journal.open(journal_path)
    assert tables(journal_path) == {"mine"}
    assert user_version(journal_path) == 0


def test_a_file_that_is_not_sqlite_is_a_journal_error(journal_path: Path) -> None:
    journal_path.parent.mkdir(parents=True)
    journal_path.write_bytes(b"this is not a database, just some text" * 100)
    with pytest.raises(JournalError, match="could not prepare the journal"):
        Journal.open(journal_path)


def add_notes(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE notes (run_id TEXT, text TEXT)")


def test_a_hand_made_v1_journal_gets_only_the_missing_migrations(tmp_path: Path) -> None:
    """The migration chain itself, with a second (test-only) migration after the real one."""
    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, migrations=MIGRATIONS[:1])
    conn.execute(
        "INSERT INTO runs (run_id, recipe_path, recipe_name, definition_hash, project, "
        "profile, params_fingerprint, credential_hash, total_iterations, status, "
        "started_at) VALUES ('r-1', 'p', 'n', 'd', 'p', 'p', 'f', 'h', 1, 'running', 't')"
    )
    assert schema_version(conn) == 1

    applied: list[int] = []

    def first_again(conn: sqlite3.Connection) -> None:
        applied.append(1)

    def second(conn: sqlite3.Connection) -> None:
        applied.append(2)
        add_notes(conn)

    assert migrate(conn, migrations=(first_again, second)) == 2
    assert applied == [2]
    assert schema_version(conn) == 2
    assert conn.execute("SELECT run_id FROM runs").fetchall() == [("r-1",)]
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (0,)
    conn.close()


def test_a_failing_migration_leaves_the_last_good_version(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    conn = sqlite3.connect(path, isolation_level=None)

    def broken(conn: sqlite3.Connection) -> None:
        add_notes(conn)
        conn.execute("THIS IS NOT SQL")

    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, migrations=(MIGRATIONS[0], broken))
    assert schema_version(conn) == 1
    assert "notes" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()


def old_journal(path: Path, *, version: int, status: str) -> sqlite3.Connection:
    """A journal as an older Northstar left it (``version`` migrations), with run ``r-1``."""
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, migrations=MIGRATIONS[:version])
    conn.execute(
        "INSERT INTO runs (run_id, recipe_path, recipe_name, definition_hash, project, "
        "profile, params_fingerprint, credential_hash, total_iterations, status, "
        "started_at) VALUES ('r-1', 'p', 'n', 'd', 'p', 'p', 'f', 'h', 2, ?, 't')",
        (status,),
    )
    return conn


def test_a_v3_journal_opens_gains_the_diagnosis_tables_and_keeps_its_runs(tmp_path: Path) -> None:
    """A journal written before diagnoses existed: the writer migrates it, readers read it."""
    from northstar import readers
    from northstar.readers.diagnoses import list_proposals, read_diagnoses

    path = tmp_path / "v3.db"
    old_journal(path, version=3, status="failed").close()
    assert user_version(path) == 3

    Journal.open(path).close()
    assert user_version(path) == SCHEMA_VERSION
    assert tables(path) == TABLES
    assert readers.get_run(path, "r-1").summary.status == "failed"
    assert read_diagnoses(path, "r-1") == ()
    assert list_proposals(path) == []


def test_a_v4_journal_gains_iteration_rows_and_its_iterations_read_without_one(
    tmp_path: Path,
) -> None:
    """Iterations written before rows were kept read as ``row=None``; new ones keep theirs."""
    from northstar import readers

    path = tmp_path / "v4.db"
    conn = old_journal(path, version=4, status="running")
    conn.execute(
        "INSERT INTO iterations (run_id, number, state, params_fingerprint) "
        "VALUES ('r-1', 1, 'verified', 'f')"
    )
    conn.close()

    with Journal.open(path) as journal:
        journal.start_iteration("r-1", 2, params_fingerprint="f", row={"title": "Hello"})
    assert user_version(path) == SCHEMA_VERSION
    first, second = readers.get_run(path, "r-1").iterations
    assert first.row is None
    assert second.row == {"title": "Hello"}


# The same migrations on Postgres (northstar.journal.postgres adapts the DDL).


def pg_tables(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {name for (name,) in rows}


def test_a_fresh_postgres_journal_gets_every_table_at_the_current_version(postgres: Any) -> None:
    url = postgres.create_database("schema_fresh")
    with Journal.open(url) as journal:
        assert schema_version(journal._db.conn) == SCHEMA_VERSION
        run_id, _ = create_run(journal)
    assert pg_tables(url) == TABLES | {"northstar_journal"}
    with Journal.open(url) as again:  # reopening migrates nothing and keeps the data
        assert again.run_record(run_id).status == "running"


def test_postgres_workers_opening_at_once_migrate_once(postgres: Any) -> None:
    url = postgres.create_database("schema_race")
    with ThreadPoolExecutor(4) as pool:
        opened = list(pool.map(lambda _: Journal.open(url), range(4)))
    for journal in opened:
        journal.close()
    import psycopg

    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM northstar_journal").fetchall() == [
            (SCHEMA_VERSION,)
        ]


def test_a_foreign_or_newer_postgres_database_is_refused(postgres: Any) -> None:
    import psycopg

    foreign = postgres.create_database("schema_foreign")
    with psycopg.connect(foreign, autocommit=True) as conn:
        conn.execute("CREATE TABLE accounts (x int)")
    with pytest.raises(JournalError, match="not a Northstar journal"):
        Journal.open(foreign)
    newer = postgres.create_database("schema_newer")
    Journal.open(newer).close()
    with psycopg.connect(newer, autocommit=True) as conn:
        conn.execute(f"UPDATE northstar_journal SET version = {SCHEMA_VERSION + 1}")
    with pytest.raises(JournalError, match="schema version"):
        Journal.open(newer)


def test_a_postgres_journal_that_cannot_be_reached_names_it_without_the_password(
    postgres: Any,
) -> None:
    url = f"postgresql://postgres:s3cret-pw@127.0.0.1:{postgres.port}/no_such_db"
    with pytest.raises(JournalError) as caught:
        Journal.open(url)
    assert "s3cret-pw" not in str(caught.value) + repr(caught.value.context)
    assert "postgres:***@127.0.0.1" in str(caught.value)
