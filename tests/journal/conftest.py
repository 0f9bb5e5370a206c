"""Shared fixtures: a journal in a temporary folder with a clock that never sleeps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from northstar.journal import Journal
from northstar.plan.model import Plan

from .helpers import StepClock, make_plan


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "journal.db"


@pytest.fixture
def journal(journal_path: Path) -> Iterator[Journal]:
    with Journal.open(journal_path, now=StepClock()) as opened:
        yield opened


@pytest.fixture
def plan() -> Plan:
    return make_plan()
