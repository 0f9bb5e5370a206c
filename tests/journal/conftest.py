"""Shared fixtures: a journal in a temporary folder with a clock that never sleeps.

``journal`` (and ``journal_target``, where it lives) runs each test on both backends: an
SQLite file, and a Postgres database (one per test module, made from the session's
throwaway cluster and emptied before each test). ``journal_path`` and ``sqlite_journal``
are for what only the SQLite file has (WAL, its bytes on disk).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from northstar.journal import Journal
from northstar.journal.paths import JournalTarget
from northstar.plan.model import Plan

from .helpers import StepClock, make_plan


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "journal.db"


@pytest.fixture(scope="module")
def postgres_journal_url(request: pytest.FixtureRequest, postgres: Any) -> str:
    """A migrated Postgres journal for this test module."""
    name = "j_" + re.sub(r"\W", "_", request.module.__name__.rsplit(".", 1)[-1])
    url: str = postgres.create_database(name)
    Journal.open(url).close()
    return url


def empty_postgres_journal(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        names = [row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "AND tablename <> 'northstar_journal'"
        )]  # fmt: skip
        conn.execute(f"TRUNCATE {', '.join(names)} RESTART IDENTITY")


@pytest.fixture(params=["sqlite", "postgres"])
def journal_target(request: pytest.FixtureRequest, journal_path: Path) -> JournalTarget:
    if request.param == "sqlite":
        return journal_path
    url: str = request.getfixturevalue("postgres_journal_url")
    empty_postgres_journal(url)
    return url


@pytest.fixture
def journal(journal_target: JournalTarget) -> Iterator[Journal]:
    with Journal.open(journal_target, now=StepClock()) as opened:
        yield opened


@pytest.fixture
def sqlite_journal(journal_path: Path) -> Iterator[Journal]:
    with Journal.open(journal_path, now=StepClock()) as opened:
        yield opened


@pytest.fixture
def plan() -> Plan:
    return make_plan()
