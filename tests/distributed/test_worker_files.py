"""A queued run's selected files are bound fleet-wide: a worker checks its copies' bytes.

The submitting machine records each row's file digests with the run; a worker whose copy
of an upload has other bytes stops the run with ``FILE_CHANGED`` before its iteration
starts (nothing is sent), and one with the same bytes runs it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from fixtures.worker_processes import Worker, northstar
from northstar import readers
from tests.conftest import RECIPES

pytestmark = pytest.mark.browser


def contact_form_in(folder: Path) -> Path:
    """recipes/contact-form.yaml with its default attachment beside it (files/notes.txt)."""
    shutil.copytree(RECIPES / "files", folder / "files")
    return Path(shutil.copy(RECIPES / "contact-form.yaml", folder / "contact-form.yaml"))


def queue_one(recipe: Path, site: FixtureSite, url: str, cwd: Path) -> str:
    args = ("--base-url", site.base_url, "-p", "name=Ada", "--journal", url)
    queued = northstar("run", str(recipe), *args, "--queue", "forms", "--detach", cwd=cwd)
    assert queued.returncode == 0, queued.stderr
    return queued.stdout.strip()


def test_a_worker_with_the_submitted_file_runs_the_upload_and_one_with_other_bytes_stops(
    tmp_path: Path, site: FixtureSite, postgres: Any, workers: list[Worker]
) -> None:
    url = postgres.create_database("worker_files")
    recipe = contact_form_in(tmp_path)
    before = site.submission_count("contact")

    same = queue_one(recipe, site, url, tmp_path)
    workers.append(Worker(url, "forms", "f1", cwd=tmp_path).ready())
    watched = northstar("watch", same, "--journal", url, "--every", "0.2", cwd=tmp_path)
    assert watched.returncode == 0, watched.stdout + watched.stderr
    assert site.submission_count("contact") == before + 1

    assert workers[0].terminate() == 0  # the next run waits in the queue for a worker
    changed = queue_one(recipe, site, url, tmp_path)  # recorded with the file as it is now
    (tmp_path / "files" / "notes.txt").write_text("other bytes on this worker\n")
    workers.append(Worker(url, "forms", "f2", cwd=tmp_path).ready())
    watched = northstar("watch", changed, "--journal", url, "--every", "0.2", cwd=tmp_path)
    detail = readers.get_run(url, changed)
    assert detail.summary.status == "failed", watched.stdout
    stopped = [e.payload for e in detail.events if e.name == "run_stopped"]
    assert [p["code"] for p in stopped] == ["FILE_CHANGED"]
    assert "notes.txt" in stopped[0]["message"]
    assert site.submission_count("contact") == before + 1  # nothing was sent
