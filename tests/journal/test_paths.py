"""Where the journal lives: explicit argument > NORTHSTAR_JOURNAL > .northstar/journal.db."""

from __future__ import annotations

from pathlib import Path

import pytest

from northstar.errors import JournalError
from northstar.journal import DEFAULT_JOURNAL_PATH, JOURNAL_ENV, Journal, resolve_journal_path
from northstar.journal.paths import redact_url, resolve_journal, run_artifacts_dir


def test_the_default_is_relative_to_the_current_directory() -> None:
    assert resolve_journal_path(None, environ={}) == Path(".northstar/journal.db")
    assert Path(".northstar/journal.db") == DEFAULT_JOURNAL_PATH


def test_the_environment_overrides_the_default() -> None:
    assert resolve_journal_path(None, environ={JOURNAL_ENV: "/x/j.db"}) == Path("/x/j.db")


def test_an_explicit_path_overrides_the_environment() -> None:
    env = {JOURNAL_ENV: "/x/j.db"}
    assert resolve_journal_path("/y/k.db", environ=env) == Path("/y/k.db")


def test_an_empty_environment_variable_counts_as_unset() -> None:
    assert resolve_journal_path(None, environ={JOURNAL_ENV: ""}) == DEFAULT_JOURNAL_PATH


def test_an_explicit_empty_path_is_an_error_not_the_default() -> None:
    with pytest.raises(JournalError, match="empty"):
        resolve_journal_path("", environ={})


def test_the_real_environment_is_read_when_none_is_given(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(JOURNAL_ENV, str(tmp_path / "env.db"))
    assert resolve_journal_path(None) == tmp_path / "env.db"


def test_open_without_a_path_creates_the_default_under_the_current_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(JOURNAL_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    with Journal.open() as journal:
        assert journal.path == DEFAULT_JOURNAL_PATH
    assert (tmp_path / ".northstar" / "journal.db").is_file()


def test_a_postgres_url_is_kept_as_text_from_the_option_or_the_environment() -> None:
    url = "postgresql://ns@db.internal:5432/journal"
    assert resolve_journal(url, environ={}) == url
    assert resolve_journal(None, environ={JOURNAL_ENV: url}) == url
    assert resolve_journal("state/j.db", environ={JOURNAL_ENV: url}) == Path("state/j.db")
    assert run_artifacts_dir(url, "r-1") == Path(".northstar/runs/r-1")  # kept locally


def test_a_command_that_needs_a_file_refuses_a_url_without_showing_its_password() -> None:
    with pytest.raises(JournalError, match="keeps its journal in a file") as caught:
        resolve_journal_path("postgresql://ns:hunter2@db/journal", environ={})
    assert "hunter2" not in str(caught.value)
    assert redact_url("postgres://ns:hunter2@db:5/j") == "postgres://ns:***@db:5/j"
    assert redact_url("postgresql://ns@db/j") == "postgresql://ns@db/j"
