"""Files a person names are written under one rule: no links, no overwrite without --force.

``report --out``, ``schema --out`` and ``import-codegen --to``: a symbolic link at the
path is refused even with ``--force`` and the file it points at is left as it was; an
existing file is replaced only with ``--force``; a FIFO is refused at once (opening it to
write would wait for a reader). The FIFO case runs as a process of its own; the others
call the same click commands in this process (``CliRunner``), which is much faster.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from northstar.cli import cli
from northstar.journal import Journal
from northstar.journal.schema import RunStatus
from tests.cli.test_cli_run import ERROR_LINE, northstar, one_error_line
from tests.journal.helpers import create_run

RECORDING = Path(__file__).parents[1] / "authoring" / "recordings" / "sign_in_and_contact.py"
VICTIM = "a file the link points at: never written\n"
WRITERS = ["schema", "report", "import-codegen"]


def recorded_run(journal_path: Path) -> str:
    with Journal.open(journal_path) as journal:
        run_id, _ = create_run(journal, total=1)
        journal.finish_run(run_id, RunStatus.STOPPED)
    return run_id


def command_of(name: str, tmp_path: Path) -> list[str]:
    """The command that writes a named file, with its path option last."""
    journal = tmp_path / "journal.db"
    return {
        "schema": lambda: ["schema", "--out"],
        "report": lambda: ["report", recorded_run(journal), "--journal", str(journal), "--out"],
        "import-codegen": lambda: ["import-codegen", str(RECORDING), "--to"],
    }[name]()


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def refused(result: Result) -> str:
    """The body of the one ``USAGE_INVALID`` line of a refused write (exit 2)."""
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    match = ERROR_LINE.match(line)
    assert match is not None, line
    assert match["code"] == "USAGE_INVALID"
    return match["body"]


@pytest.mark.parametrize("name", WRITERS)
def test_a_link_is_never_written_through_even_with_force(tmp_path: Path, name: str) -> None:
    command = command_of(name, tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM)
    link = tmp_path / "out.yaml"
    link.symlink_to(victim)
    for force in ((), ("--force",)):
        line = refused(invoke(*command, str(link), *force))
        assert "is a symbolic link; Northstar does not write through links" in line
    assert victim.read_text() == VICTIM
    assert link.is_symlink()


@pytest.mark.parametrize("name", WRITERS)
def test_an_existing_file_is_replaced_only_with_force(tmp_path: Path, name: str) -> None:
    command = command_of(name, tmp_path)
    target = tmp_path / "out.yaml"
    target.write_text("kept\n")
    assert "already exists" in refused(invoke(*command, str(target)))
    assert target.read_text() == "kept\n"
    replaced = invoke(*command, str(target), "--force")
    assert replaced.exit_code == 0, replaced.output
    assert target.read_text() != "kept\n"


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "schema.json"
    os.mkfifo(fifo)
    proc = northstar("schema", "--out", str(fifo), "--force", cwd=tmp_path, timeout=30)
    assert proc.returncode == 2
    assert "is not a regular file" in one_error_line(proc, "USAGE_INVALID")["body"]


def test_a_new_file_and_the_reports_own_page_are_written(tmp_path: Path) -> None:
    journal = tmp_path / "journal.db"
    run_id = recorded_run(journal)
    new = tmp_path / "new" / "schema.json"  # its folder is made
    assert invoke("schema", "--out", str(new)).exit_code == 0
    assert new.read_text().startswith("{")
    for _ in range(2):  # the run's own report.html is rewritten each time
        made = invoke("report", run_id, "--journal", str(journal))
        assert made.exit_code == 0, made.output
    assert Path(made.stdout.strip()).name == "report.html"
