"""Submissions the browser refused to send, through the CLI in real Chromium.

The article form's Title is ``required``: with an empty title Chromium shows its own
validation message and no request leaves the page. That iteration is ``failed`` with
``NOT_SENT`` (safe, not blocked), and ``--on-failure continue`` finishes the batch past it.
The server's records are the oracle.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from tests.browser.test_rich_editors import ARTICLE_RECIPE
from tests.cli.test_cli_run import northstar, write

pytestmark = pytest.mark.browser

# The rich-editor article recipe, with a title that may be empty and a short timeout.
RECIPE = ARTICLE_RECIPE.replace(
    "title: {type: string, required: true}", 'title: {type: string, default: ""}'
).replace("timeout: 15000", "timeout: 4000")

ROWS = [
    {"title": "First", "body": "one"},
    {"title": "", "body": "two"},
    {"title": "Third", "body": "three"},
]


def run_rows(tmp_path: Path, site: FixtureSite, *extra: str) -> tuple[int, str, str]:
    recipe = write(tmp_path, "publish-article.yaml", RECIPE)
    rows = write(tmp_path, "rows.json", json.dumps(ROWS))
    args = ("run", str(recipe), "--params-file", str(rows), "--base-url", site.base_url, *extra)
    proc = northstar(*args, "--json", cwd=tmp_path, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def iteration_states(tmp_path: Path) -> list[tuple[int, str, str | None]]:
    with sqlite3.connect(tmp_path / "journal.db") as db:
        rows = db.execute("SELECT number, state, reason_code FROM iterations ORDER BY number")
        return [tuple(row) for row in rows.fetchall()]


def bodies(site: FixtureSite) -> list[str]:
    return [s["body"] for s in site.submissions() if s["kind"] == "article"]


def test_a_browser_validation_failure_is_not_sent_and_the_run_stops_safely(
    tmp_path: Path, site: FixtureSite
) -> None:
    code, out, err = run_rows(tmp_path, site)
    assert code == 11, err
    assert bodies(site) == ["one"]
    ending = json.loads(out)
    assert (ending["code"], ending["status"]) == ("NOT_SENT", "failed")
    assert "Title: " in ending["reason"]["message"]  # the browser's validation message
    assert iteration_states(tmp_path)[:2] == [(1, "verified", None), (2, "failed", "NOT_SENT")]


def test_on_failure_continue_finishes_the_batch_and_reports_the_row_not_sent(
    tmp_path: Path, site: FixtureSite
) -> None:
    code, out, err = run_rows(tmp_path, site, "--on-failure", "continue")
    assert code == 11, err
    assert bodies(site) == ["one", "three"]
    assert iteration_states(tmp_path) == [
        (1, "verified", None),
        (2, "failed", "NOT_SENT"),
        (3, "verified", None),
    ]
    ending = json.loads(out)
    assert (ending["verified"], ending["requested"], ending["code"]) == (2, 3, "NOT_SENT")
    assert (ending["reason"]["iteration"], ending["reason"]["code"]) == (2, "NOT_SENT")
    assert "--skip N" in ending["next"]


def test_resume_skip_leaves_a_failed_row_out_with_its_reason_and_refuses_a_verified_one(
    tmp_path: Path, site: FixtureSite
) -> None:
    code, out, err = run_rows(tmp_path, site)
    assert code == 11, err
    run_id = json.loads(out)["run_id"]
    refused = northstar("resume", run_id, "--skip", "1", "--why", "again", cwd=tmp_path)
    assert refused.returncode == 2
    assert "only a failed row can be skipped" in refused.stderr
    resumed = northstar(
        "resume", run_id, "--skip", "2", "--why", "no title in the sheet", "--json",
        "--params-file", str(tmp_path / "rows.json"), cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert resumed.returncode == 14, resumed.stderr
    assert bodies(site) == ["one", "three"]
    assert iteration_states(tmp_path) == [
        (1, "verified", None),
        (2, "failed", "SKIPPED"),
        (3, "verified", None),
    ]
    ending = json.loads(resumed.stdout)
    assert (ending["ending"], ending["verified"], ending["requested"]) == ("skipped", 2, 3)
    assert ending["reason"]["message"] == "skipped: no title in the sheet"
