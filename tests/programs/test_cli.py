"""``northstar run|validate|show`` on program files, in a real process."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import northstar, one_error_line
from tests.programs.test_broker import EXAMPLE


@pytest.mark.browser
def test_run_and_show_a_program_from_the_command_line(tmp_path: Path, site: FixtureSite) -> None:
    ran = northstar("run", str(EXAMPLE), "--base-url", site.base_url, "--repeat", "1", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    run_id = re.search(r"run (r-[0-9a-f]+): verified, 1 of 1 iterations verified", ran.stdout)
    assert run_id is not None, ran.stdout
    assert "model calls: 0 reported by 0 iteration(s), unknown for 1" in ran.stdout
    assert site.submission_count("post") == 3
    shown = northstar("show", run_id.group(1), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("submit.file_orders.L") == 3
    assert "outputs: filed=3" in shown.stdout


def test_validate_a_program_and_refuse_a_bad_one(tmp_path: Path) -> None:
    ok = northstar("validate", str(EXAMPLE), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "file-orders v1, a program" in ok.stdout
    bad = tmp_path / "bad.py"
    bad.write_text("async def main(nx):\n    pass\n")
    refused = northstar("validate", str(bad), cwd=tmp_path)
    assert refused.returncode == 2
    one_error_line(refused, "RECIPE_INVALID")


def test_options_programs_do_not_take_yet_are_refused_before_anything_starts(
    tmp_path: Path,
) -> None:
    args = ("run", str(EXAMPLE), "--base-url", "http://127.0.0.1:9", "--concurrency", "2")
    refused = northstar(*args, cwd=tmp_path)
    assert refused.returncode == 2
    assert "--concurrency" in one_error_line(refused, "USAGE_INVALID")["body"]
    assert not (tmp_path / "journal.db").exists()
