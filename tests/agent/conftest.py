"""An ``AgentHost`` on the session's headless Chromium, with a journal of its own per test."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from northstar.agent import AgentHost, AgentSettings
from northstar.journal import Journal


@pytest.fixture
def journal(tmp_path: Path) -> Any:
    with Journal.open(tmp_path / "journal.db") as opened:
        yield opened


@pytest.fixture
def uploads(tmp_path: Path) -> Path:
    """The folder the agent sessions may upload from (``northstar mcp --files``)."""
    folder = tmp_path / "uploads"
    folder.mkdir()
    return folder


@pytest.fixture
async def agents(host: Any, journal: Journal, uploads: Path) -> AsyncIterator[AgentHost]:
    settings = AgentSettings(files_dir=uploads)
    async with AgentHost(host, journal, settings=settings) as started:
        yield started


def ref_of(text: str, label: str) -> str:
    """The reference of the first line in an answer that shows ``label`` (``button "Send"``)."""
    for line in text.splitlines():
        if label in line:
            found = re.search(r"\[ref=([^\]]+)\]", line)
            if found:
                return found.group(1)
    raise AssertionError(f"no reference for {label} in:\n{text}")
