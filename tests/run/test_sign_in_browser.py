"""Sign in once, in real Chromium against the fixture site's login-walled notes.

The server is the oracle: it counts logins and records, with each saved note, whether
the request carried the cookie the previous save set (``last_note_cookie``). A test
triggers the session's expiry between iterations with ``site.expire_sessions()`` from
an iteration hook, so nothing races a clock.
"""

from __future__ import annotations

import dataclasses
import stat
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.browser.hooks import NoHooks
from northstar.journal import Journal
from northstar.plan.compiler import prepare
from northstar.readers.endings import read_ending
from northstar.recipe.inputs import validate_rows
from northstar.recipe.loader import parse_recipe
from northstar.results import IterationResult
from northstar.run.execution import RunOutcome, RunRequest, execute_run
from northstar.run.recovery import reconcile_run
from northstar.run.repeat import RepeatOptions

pytestmark = pytest.mark.browser

RECIPE = Path(__file__).parents[2] / "recipes" / "members-note.yaml"
PASSWORD = "demo-password"


def request_for(
    tmp_path: Path, site: FixtureSite, count: int, *, password: str = PASSWORD, **extra: Any
) -> RunRequest:
    text = RECIPE.read_text()
    path = tmp_path / "members-note.yaml"
    path.write_text(text)
    compiled = prepare(parse_recipe(text, source=str(path)), source=str(path))
    rows = [{"title": f"Note {i}", "password": password} for i in range(1, count + 1)]
    return RunRequest(
        recipe_path=path,
        compiled=compiled,
        rows=validate_rows(compiled.recipe.params, rows, {}),
        repeat=RepeatOptions.of(count),
        base_url=site.base_url,
        **extra,
    )


async def run(
    host: Any, request: RunRequest, tmp_path: Path, on_result: Any = lambda r: None
) -> tuple[RunOutcome, Path]:
    journal_path = tmp_path / "journal.db"
    with Journal.open(journal_path) as journal:
        outcome = await execute_run(request, host=host, journal=journal, on_result=on_result)
    return outcome, journal_path


async def test_ten_iterations_log_in_once_each_in_a_fresh_signed_in_context(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    outcome, _ = await run(host, request_for(tmp_path, site, 10), tmp_path)

    assert outcome.status == "verified", outcome.error
    assert site.login_count() == 1  # setup, once for the one lane
    notes = [s for s in site.submissions() if s["kind"] == "note"]
    assert [n["title"] for n in notes] == [f"Note {i}" for i in range(1, 11)]
    assert {n["user"] for n in notes} == {"demo"}  # the sign-in cookie was in every context
    # The cookie iteration 1's save set is gone in iteration 2: each context is fresh.
    assert [n["last_note_cookie"] for n in notes] == [""] * 10


async def test_two_lanes_log_in_once_per_lane(host: Any, site: FixtureSite, tmp_path: Path) -> None:
    outcome, _ = await run(host, request_for(tmp_path, site, 4, concurrency=2), tmp_path)

    assert outcome.status == "verified", outcome.error
    assert site.login_count() == 2
    assert site.submission_count("note") == 4


async def test_an_expiry_between_iterations_runs_setup_again_once_and_the_run_verifies(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    def expire_after_second(result: IterationResult) -> None:
        if result.iteration == 2:
            site.expire_sessions()

    request = request_for(tmp_path, site, 4)
    outcome, journal_path = await run(host, request, tmp_path, on_result=expire_after_second)

    assert outcome.status == "verified", outcome.error
    assert site.login_count() == 2  # the first setup, and one after the expiry
    assert site.submission_count("note") == 4
    events = [e.name for e in readers.get_run(journal_path, outcome.run_id).events]
    assert events.count("setup_ran") == 2


async def test_an_expiry_setup_cannot_fix_stops_with_sign_in_failed_and_sends_nothing(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    outcome, _ = await run(host, request_for(tmp_path, site, 3, password="wrong"), tmp_path)

    assert outcome.status == "failed"
    assert outcome.error is not None
    assert outcome.error.code == "SIGN_IN_FAILED"
    assert site.submission_count() == 0  # no note was sent
    assert outcome.summary.verified_count == 0


async def test_the_state_is_0600_while_held_and_no_file_holds_the_session_cookie(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    seen: list[int] = []
    held = tmp_path / "runs"

    def mode_of_held(result: IterationResult) -> None:
        for state in held.glob("*/signed-in-lane-*.json"):
            seen.append(stat.S_IMODE(state.stat().st_mode))

    kept = tmp_path / "kept-state.json"
    request = request_for(tmp_path, site, 2, keep_state=str(kept))
    outcome, _journal_path = await run(host, request, tmp_path, on_result=mode_of_held)

    assert outcome.status == "verified", outcome.error
    assert seen
    assert set(seen) == {0o600}
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    token = session_cookie(kept)
    assert not list(held.glob("*/signed-in-lane-*.json"))  # deleted at the end
    for path in tmp_path.rglob("*"):
        if path.is_file() and path != kept:
            assert token.encode() not in path.read_bytes(), path


def session_cookie(state_file: Path) -> str:
    import json

    cookies = json.loads(state_file.read_text())["cookies"]
    value = next(c["value"] for c in cookies if c["name"] == "northstar_session")
    assert len(value) > 20
    return str(value)


# A variant whose form is reached by a `goto` step, so the session can end between the
# tab's start page and the step that needs it.
GOTO_FORM = (
    RECIPE.read_text()
    .replace('start: "{{ base_url }}/members/notes/new"', 'start: "{{ base_url }}/members/notes"')
    .replace("{role: heading, name: New note}", "{role: heading, name: Notes}")
    .replace(
        "steps:\n  - id: title\n",
        "steps:\n  - id: open-form\n    tab: notes\n    goto: /members/notes/new\n  - id: title\n",
    )
)


class ExpireBefore(NoHooks):
    """Ends every session right before the named step: a login page appears mid-iteration."""

    def __init__(self, site: FixtureSite, step_id: str) -> None:
        self.site, self.step_id = site, step_id

    async def before_step(self, session: Any, plan: Any, step: Any) -> None:
        if step.id == self.step_id:
            self.site.expire_sessions()


async def test_a_login_page_mid_iteration_is_signed_out_with_its_step(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    request = request_for(tmp_path, site, 2)
    path = tmp_path / "goto-form.yaml"
    path.write_text(GOTO_FORM)
    compiled = prepare(parse_recipe(GOTO_FORM, source=str(path)), source=str(path))
    request = dataclasses.replace(request, recipe_path=path, compiled=compiled)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(
            request, host=host, journal=journal, hooks=ExpireBefore(site, "open-form")
        )
        ending = read_ending(journal.path, outcome.run_id)

    assert outcome.status == "failed"
    [result] = outcome.results
    assert (result.reason_code, result.failing_step) == ("SIGNED_OUT", "title")
    assert ending.code == "SIGNED_OUT"
    assert ending.ending is not None
    assert ending.ending.name == "signed_out"
    assert site.submission_count() == 0


SLOW_SAVE = RECIPE.read_text().replace(
    "    effect: submit\n", "    effect: submit\n    timeout: 2000\n    settle: 0\n"
)


async def test_a_reconcile_probe_of_the_login_walled_listing_sees_the_entry(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    path = tmp_path / "slow-save.yaml"
    path.write_text(SLOW_SAVE)
    compiled = prepare(parse_recipe(SLOW_SAVE, source=str(path)), source=str(path))
    request = dataclasses.replace(
        request_for(tmp_path, site, 1), recipe_path=path, compiled=compiled
    )
    site.hold("/members/notes")  # the save reaches the server and waits there
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=host, journal=journal)
        assert outcome.status == "blocked"
        site.wait_held(1)
        site.release_held(save=True)  # saved after the step gave up: the outcome is unknown
        [decision] = await reconcile_run(
            outcome.run_id, outcome.credential, request, host=host, journal=journal
        )

    assert decision.verdicts == (("save", "found"),)  # signed out, it would see the login page
    assert site.submission_count("note") == 1
    assert site.login_count() == 2  # the run's setup, and the reconcile's own sign-in
    assert not list((tmp_path / "runs").glob("*/signed-in-*.json"))


async def test_keep_context_signs_in_once_and_keeps_its_page(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    outcome, _ = await run(host, request_for(tmp_path, site, 3, keep_context=True), tmp_path)

    assert outcome.status == "verified", outcome.error
    assert site.login_count() == 1
    notes = [s for s in site.submissions() if s["kind"] == "note"]
    # One context for the lane: the cookie each save set is sent with the next save.
    assert [n["last_note_cookie"] for n in notes] == ["", "Note%201", "Note%202"]
