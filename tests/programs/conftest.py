"""Program runs on the session's headless Chromium, each with a journal of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from northstar.journal import Journal
from northstar.programs import ProgramBroker, load_program
from northstar.recipe.params import coerce_params
from northstar.run.execution import RunOutcome, RunRequest
from northstar.run.repeat import RepeatOptions


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal.open(tmp_path / "journal.db") as opened:
        yield opened


def program_request(
    path: Path, base_url: str, *, repeat: int = 1, params: dict[str, Any] | None = None
) -> RunRequest:
    _, compiled = load_program(path)
    row = coerce_params(compiled.recipe.params, params or {}, recipe_dir=path.parent)
    return RunRequest(
        recipe_path=path,
        compiled=compiled,
        rows=[row],
        repeat=RepeatOptions.of(repeat),
        base_url=base_url,
    )


async def run_program_file(
    path: Path,
    host: Any,
    journal: Journal,
    base_url: str,
    *,
    repeat: int = 1,
    params: dict[str, Any] | None = None,
) -> RunOutcome:
    """The broker's run of a program file, as ``northstar run PATH`` does it."""
    declaration, _ = load_program(path)
    request = program_request(path, base_url, repeat=repeat, params=params)
    broker = ProgramBroker(request, declaration, host=host, journal=journal)
    return await broker.run()


def write_program(folder: Path, body: str, *, declaration: str | None = None) -> Path:
    """A program file: a declaration for the fixture site's post form, and ``body`` as main."""
    declared = declaration or (
        'PROGRAM = {"name": "test-program", '
        '"tabs": {"site": {"start": "{{ base_url }}/posts/new"}}}'
    )
    lines = ["from northstar.sdk import Session", "", declared, "", "", "async def main(nx):"]
    lines += ["    " + line for line in body.strip("\n").splitlines()]
    path = folder / "flow.py"
    path.write_text("\n".join(lines) + "\n")
    return path
