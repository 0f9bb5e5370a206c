"""Converted recordings run and verify against the fixture site in real Chromium (1 iteration)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.authoring import import_codegen
from northstar.composition import load_compiled
from northstar.journal import Journal
from northstar.recipe.inputs import validate_rows
from northstar.run.execution import RunRequest, execute_run
from northstar.run.repeat import RepeatOptions

pytestmark = pytest.mark.browser
RECORDINGS = Path(__file__).parent / "recordings"


async def run_converted(
    recording: str, host: Any, site: FixtureSite, tmp_path: Path, **params: str
) -> Any:
    path = tmp_path / "recorded.yaml"
    path.write_text(import_codegen((RECORDINGS / recording).read_text(), name="recorded").text)
    compiled = load_compiled(path)
    rows = validate_rows(compiled.recipe.params, [params], {})
    request = RunRequest(path, compiled, rows, RepeatOptions.of(1), base_url=site.base_url)
    with Journal.open(tmp_path / "journal.db") as journal:
        return await execute_run(request, host=host, journal=journal)


async def test_a_recorded_sign_in_and_form_submission_verifies(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("attached by the recipe\n")
    outcome = await run_converted(
        "sign_in_and_contact.py", host, site, tmp_path, password="demo-password"
    )
    assert outcome.status == "verified", outcome
    [contact] = site.submissions()
    assert (contact["name"], contact["topic"], contact["agree"]) == (
        "Ada Lovelace",
        "billing",
        "no",
    )
    assert contact["attachment_filename"] == "notes.txt"


async def test_a_recorded_playground_and_popup_verify(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    outcome = await run_converted("playground_and_popup.py", host, site, tmp_path)
    assert outcome.status == "verified", outcome
    assert [(s["kind"], s["colour"]) for s in site.submissions()] == [("popup", "green")]


async def test_a_real_recording_verifies_once_its_submission_is_checked(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    # Recorded with the real recorder under Xvfb (keyboard only); the one line a person adds
    # is the check of the submission, which the recording had none of.
    recorded = (RECORDINGS / "recorded_contact_form.py").read_text()
    last = '    await page.get_by_role("radio", name="Low").press("Enter")\n'
    check = '    await expect(page).to_have_url("http://127.0.0.1:46683/form/thanks?id=2")\n'
    (tmp_path / "checked.py").write_text(recorded.replace(last, last + check))
    outcome = await run_converted(str(tmp_path / "checked.py"), host, site, tmp_path)
    assert outcome.status == "verified", outcome
    [contact] = site.submissions()
    assert (contact["name"], contact["email"]) == ("Grace Hopper", "grace@example.com")
