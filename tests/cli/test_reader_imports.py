"""The read-only commands load no run machinery: checked in a real process, by ``sys.modules``.

The import contracts (``pyproject.toml``) check the code; this checks what a person's
``northstar runs`` and ``northstar show`` actually load, lazy imports included.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from northstar.journal import Journal
from tests.journal.helpers import create_run

REPO = Path(__file__).resolve().parents[2]
# Prints the modules the command loaded, whatever way it exits.
PROBE = """
import atexit, json, sys
atexit.register(lambda: print("MODULES " + json.dumps(sorted(sys.modules)), file=sys.stderr))
from northstar.__main__ import main
main(sys.argv[1:])
"""
RUN_MACHINERY = (
    "northstar.run",
    "northstar.composition",
    "northstar.cases",
    "northstar.journal.store",
    "northstar.journal.recorder",
    "northstar.cli.run_commands",
    "northstar.cli.recovery_commands",
    "browser_adapters",
    "playwright",
    "tenacity",
)


def loaded_modules(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    [line] = [x for x in done.stderr.splitlines() if x.startswith("MODULES ")]
    return list(json.loads(line.removeprefix("MODULES ")))


def machinery(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in RUN_MACHINERY)]


@pytest.fixture
def journal_with_a_run(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "journal.db"
    with Journal.open(path) as journal:
        run_id, _ = create_run(journal)
    return path, run_id


@pytest.mark.parametrize("command", ["runs", "show", "report"])
def test_a_reader_command_loads_no_run_machinery(
    command: str, journal_with_a_run: tuple[Path, str], tmp_path: Path
) -> None:
    journal, run_id = journal_with_a_run
    args = {
        "runs": ["runs"],
        "show": ["show", run_id],
        "report": ["report", run_id, "--out", str(tmp_path / "r.html")],
    }[command]
    modules = loaded_modules(*args, "--journal", str(journal))
    assert "northstar.readers" in modules  # the probe saw the command do its work
    assert machinery(modules) == []


def test_the_probe_sees_run_machinery_where_it_is_loaded() -> None:
    modules = loaded_modules("validate", "recipes/contact-form.yaml")
    assert "northstar.plan.compiler" in modules
    assert "northstar.cli.run_commands" in machinery(modules)
