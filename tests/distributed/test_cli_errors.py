"""``worker`` and ``run --queue`` refuse what they cannot do with one coded line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli_run import northstar, one_error_line
from tests.conftest import RECIPES

RECIPE = str(RECIPES / "publish-post.yaml")
SITE = ("--base-url", "http://127.0.0.1:9", "-p", "title=T")


def test_a_worker_needs_a_postgres_journal(tmp_path: Path) -> None:
    proc = northstar("worker", "--queue", "posts", "--journal", "j.db", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Postgres journal" in one_error_line(proc, "USAGE_INVALID")["body"]


def test_run_queue_needs_a_postgres_journal(tmp_path: Path) -> None:
    proc = northstar("run", RECIPE, *SITE, "--queue", "posts", "--journal", "j.db", cwd=tmp_path)
    assert proc.returncode == 2
    one_error_line(proc, "USAGE_INVALID")
    assert not (tmp_path / "j.db").exists()  # nothing was recorded


def test_run_queue_refuses_an_interval_before_recording_anything(tmp_path: Path) -> None:
    url = "postgresql://nobody:pw-5e1@127.0.0.1:9/none"  # never reached
    args = ("--repeat", "2", "--interval", "5", "--queue", "posts", "--journal", url)
    proc = northstar("run", RECIPE, *SITE, *args, cwd=tmp_path)
    assert proc.returncode == 2
    assert "--interval" in one_error_line(proc, "USAGE_INVALID")["body"]
    assert "pw-5e1" not in proc.stderr


@pytest.mark.parametrize(
    ("recipe", "flags", "named"),
    [
        ("publish-post.yaml", ("--keep-context",), "--keep-context"),
        ("publish-post.yaml", ("--monitor",), "--monitor"),
    ],
)
def test_run_queue_refuses_what_workers_would_not_honour(
    tmp_path: Path, recipe: str, flags: tuple[str, ...], named: str
) -> None:
    url = "postgresql://nobody:pw-5e1@127.0.0.1:9/none"  # never reached: refused before
    site = ("--base-url", "http://127.0.0.1:9")
    title = ("-p", "title=T") if recipe == "publish-post.yaml" else ()
    args = (*site, *title, *flags, "--queue", "posts", "--journal", url)
    proc = northstar("run", str(RECIPES / recipe), *args, cwd=tmp_path)
    assert proc.returncode == 2
    body = one_error_line(proc, "USAGE_INVALID")["body"]
    assert named in body
    assert "not carried to the workers" in body
    assert "pw-5e1" not in proc.stderr
