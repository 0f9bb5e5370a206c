"""Recording a recipe behind a sign-in: setup unrecorded, no secret kept, replay offline.

Real headless Chromium against a fixture site of the test's own (stopped before the
replay). The server's login counter says whether setup ran; its open session tokens are
the cookie values no file of the case may hold, in any encoding (base64 bodies of the HAR
decoded too), nor the password.
"""

from __future__ import annotations

import base64
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures._site_routes import DEMO_PASSWORD
from fixtures.site_server import FixtureSite
from northstar.cases.manifest import HAR_FILE, load_case
from northstar.cases.record_replay import record_case, replay_case
from northstar.composition import load_compiled
from northstar.recipe.params import coerce_params
from northstar.run.signin import SignInPlans, save_sign_in
from tests.browser.test_replay import answers
from tests.conftest import RECIPES
from tests.core.test_redaction import every_form

pytestmark = pytest.mark.browser

RECIPE = RECIPES / "members-note.yaml"
PARAMS = {"title": "Recorded note", "password": DEMO_PASSWORD}


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the recording's temporary folders go, to see that the held state is gone."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def forms(value: str) -> set[bytes]:
    """Every form a value may be written in: raw, URL- and HTML-encoded, JSON, base64."""
    texts = set(every_form(value).values())
    encoded = {base64.b64encode(value.encode()), base64.urlsafe_b64encode(value.encode())}
    return {text.encode() for text in texts} | encoded


def har_bodies(har: Path) -> Iterator[bytes]:
    """The HAR's base64 bodies, decoded: a value inside one is not visible in the file."""
    for entry in json.loads(har.read_text(encoding="utf-8"))["log"]["entries"]:
        for content in (entry["response"]["content"], entry["request"].get("postData") or {}):
            if content.get("encoding") == "base64":
                yield base64.b64decode(content["text"])


def assert_nowhere(value: str, case_dir: Path) -> None:
    wanted = forms(value)
    for path in case_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(form in data for form in wanted), path.name
    for body in har_bodies(case_dir / HAR_FILE):
        assert not any(form in body for form in wanted)


async def record_members(
    to: Path, host: Any, *, state: Path | None = None
) -> tuple[list[str], int]:
    """Record members-note from a site of its own, stopped after: the session tokens the
    site handed out, and its login count. With ``state``, sign in and save it there first."""
    with FixtureSite() as site:
        if state is not None:
            compiled = load_compiled(RECIPE)
            values = coerce_params(compiled.recipe.params, PARAMS, recipe_dir=RECIPES)
            plans = SignInPlans.of(compiled, values, site.base_url)
            assert plans is not None
            await save_sign_in(host, plans, state, by_hand=False, wait_ms=10_000)
        outcome = await record_case(
            RECIPE,
            PARAMS,
            to=to,
            base_url=site.base_url,
            shared=host,
            state=str(state) if state else None,
        )
        tokens, logins = site.session_tokens(), site.login_count()
        assert site.submission_count("note") == (1 if outcome.case else 0)
    assert outcome.case is not None, outcome.result.reason
    assert not answers(f"{outcome.case.base_url}/members/notes/new")  # only the recording
    return tokens, logins


async def test_setup_signs_in_unrecorded_and_the_case_replays_without_any_secret(
    tmp_path: Path, host: Any, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case_dir = tmp_path / "members-note"
    tokens, logins = await record_members(case_dir, host)

    assert logins == 1  # setup signed in once, before the iteration
    assert len(tokens) == 1
    har = json.loads((case_dir / HAR_FILE).read_text(encoding="utf-8"))
    urls = [entry["request"]["url"] for entry in har["log"]["entries"]]
    assert not [url for url in urls if "/login" in url], urls  # setup is not in the case
    assert any(url.endswith("/members/notes/new") for url in urls)
    assert_nowhere(tokens[0], case_dir)
    assert_nowhere(DEMO_PASSWORD, case_dir)
    assert not list(private_tmp.rglob("*.json"))  # the held state was deleted

    case = load_case(case_dir)
    assert case.signed_in == "setup"
    assert case.secret_params == ()  # the password only signed in: a replay needs none
    assert case.params["password"] == "<secret:password>"

    monkeypatch.delenv("NORTHSTAR_SECRET_PASSWORD", raising=False)
    replay = await replay_case(case_dir, artifacts=tmp_path / "out", shared=host)
    assert replay.passed, replay.explain()
    assert replay.result.outputs == case.outputs


async def test_a_saved_state_is_used_instead_of_setup_and_kept_out_of_the_case(
    tmp_path: Path, host: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state.json"
    case_dir = tmp_path / "members-note"
    tokens, logins = await record_members(case_dir, host, state=state)

    assert logins == 1  # the sign-in that saved the state; the recording did not log in
    assert state.is_file()  # the user's file: not the recording's to delete
    assert load_case(case_dir).signed_in == "state"
    for token in tokens:
        assert_nowhere(token, case_dir)
    monkeypatch.delenv("NORTHSTAR_SECRET_PASSWORD", raising=False)
    replay = await replay_case(case_dir, artifacts=tmp_path / "out", shared=host)
    assert replay.passed, replay.explain()
