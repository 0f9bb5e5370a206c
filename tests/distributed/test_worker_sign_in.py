"""A queued run of a recipe with ``setup``: a worker signs each lane in once, not per iteration.

The fixture site counts logins (the oracle); the worker and ``run --queue`` are child
processes on a throwaway Postgres, as in ``test_workers``. The worker's ``TMPDIR`` is the
test's, so the folder where it holds the signed-in state can be looked for afterwards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from fixtures.worker_processes import Worker, northstar, write_rows
from tests.conftest import RECIPES

pytestmark = pytest.mark.browser

RECIPE = str(RECIPES / "members-note.yaml")
PASSWORD = "demo-password"


def test_a_worker_with_one_lane_signs_in_once_for_six_queued_iterations(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    url = postgres.create_database("worker_sign_in")
    temp = tmp_path / "worker-tmp"
    temp.mkdir()
    env = {"NORTHSTAR_SECRET_PASSWORD": PASSWORD, "TMPDIR": str(temp)}
    worker = Worker(url, "notes", "w1", cwd=tmp_path, lanes=1, env=env).ready()
    workers.append(worker)
    titles = [f"Queued note {n}" for n in range(1, 7)]
    rows = write_rows(tmp_path / "rows.jsonl", titles)
    args = ("--base-url", site.base_url, "--params-file", str(rows), "--journal", url)
    proc = northstar("run", RECIPE, *args, "--queue", "notes", cwd=tmp_path, env=env)

    assert proc.returncode == 0, proc.stderr + proc.stdout
    notes = [s for s in site.submissions() if s["kind"] == "note"]
    assert sorted(n["title"] for n in notes) == sorted(titles)
    assert {n["user"] for n in notes} == {"demo"}  # every iteration's context was signed in
    assert [n["last_note_cookie"] for n in notes] == [""] * 6  # and fresh
    assert site.login_count() == 1  # one lane, one worker: one login
    assert worker.terminate() == 0
    assert list(temp.glob("northstar-signed-in-*")) == []  # the held state left with it
