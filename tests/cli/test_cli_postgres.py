"""The CLI on a Postgres journal: the same run, and the same readers, as on the SQLite file.

A throwaway cluster (``tests/conftest.py::postgres``) holds one database per test; the
worker runs as a separate process with ``NORTHSTAR_JOURNAL`` set to its URL.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import northstar, one_error_line
from tests.conftest import RECIPES


@pytest.mark.browser
def test_a_run_on_postgres_is_read_back_by_runs_show_and_report(
    tmp_path: Path, site: FixtureSite, postgres: Any
) -> None:
    url = postgres.create_database("cli_run")
    env = {"NORTHSTAR_JOURNAL": url}
    recipe = str(RECIPES / "publish-post.yaml")
    args = ("--base-url", site.base_url, "-p", "title=On Postgres")
    proc = northstar("run", recipe, *args, cwd=tmp_path, extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert site.submission_count("post") == 1
    assert not (tmp_path / "journal.db").exists()  # nothing went to a file journal
    run_id = re.search(r"r-[0-9a-f]{12}", proc.stdout + proc.stderr)
    assert run_id is not None, proc.stdout

    listed = northstar("runs", "--json", "--journal", url, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    [summary] = json.loads(listed.stdout)
    assert (summary["run_id"], summary["status"]) == (run_id[0], "verified")
    assert summary["iterations_verified"] == 1
    shown = northstar("show", run_id[0], "--json", "--journal", url, cwd=tmp_path)
    detail = json.loads(shown.stdout)
    steps = [s["step_id"] for s in detail["iterations"][0]["steps"]]
    assert steps[:2] == ["title", "publish"]
    assert {i["state"] for i in detail["iterations"]} == {"verified"}
    report = northstar("report", run_id[0], "--journal", url, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    page = tmp_path / report.stdout.strip()  # relative to the worker's folder: kept locally
    assert page.is_relative_to(tmp_path / ".northstar" / "runs" / run_id[0])
    assert "On Postgres" in page.read_text(encoding="utf-8")


def test_an_unreachable_postgres_journal_is_one_line_without_the_password(
    tmp_path: Path, postgres: Any
) -> None:
    url = f"postgresql://postgres:pw-9f2e-hidden@127.0.0.1:{postgres.port}/no_such_db"
    proc = northstar("runs", "--journal", url, cwd=tmp_path)
    assert proc.returncode != 0
    match = one_error_line(proc, "JOURNAL_ERROR")
    assert "pw-9f2e-hidden" not in proc.stdout + proc.stderr
    assert "postgres:***@127.0.0.1" in match["body"]
