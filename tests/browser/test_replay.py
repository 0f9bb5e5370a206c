"""Record a case live from the fixture site, stop the site, replay the case offline.

Each test records into ``tmp_path`` from a fixture site of its own (so it can be stopped),
on the session's Chromium (``host``); nothing reaches the internet.
"""

from __future__ import annotations

import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from fixtures._site_routes import DEMO_PASSWORD
from fixtures.site_server import FixtureSite
from northstar.cases.manifest import HAR_FILE, load_case
from northstar.cases.record_replay import record_case, replay_case
from northstar.errors import ParamMissing
from tests.conftest import RECIPES

pytestmark = pytest.mark.browser


async def record_offline(name: str, params: dict[str, str], to: Path, host: Any) -> Path:
    """Record ``recipes/NAME.yaml`` into ``to`` and stop the site it was recorded from."""
    with FixtureSite() as site:
        outcome = await record_case(
            RECIPES / f"{name}.yaml", params, to=to, base_url=site.base_url, shared=host
        )
    assert outcome.case is not None, outcome.result.reason
    assert not answers(f"{outcome.case.base_url}/form")  # gone: only the recording answers
    return to


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.URLError:
        return False


def changed_recipe(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A changed copy of an example, with its ``files/`` beside it (file params resolve)."""
    text = (RECIPES / f"{name}.yaml").read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    folder = tmp_path / "recipes"
    shutil.copytree(RECIPES / "files", folder / "files")
    path = folder / f"{name}.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


async def test_a_recorded_case_replays_with_the_server_stopped(tmp_path: Path, host: Any) -> None:
    case_dir = await record_offline("contact-form", {"name": "Ada"}, tmp_path / "contact", host)
    case = load_case(case_dir)
    assert case.outputs == {"message_id": "1", "confirmation": "Thank you"}
    assert sorted(p.name for p in case_dir.glob("step-*.html"))[0] == "step-01-name.html"
    assert (case_dir / HAR_FILE).stat().st_size < 100_000

    replay = await replay_case(case_dir, artifacts=tmp_path / "out", shared=host)
    assert replay.passed, replay.explain()
    assert not replay.definition_changed


async def test_a_missing_target_fails_the_replay_naming_step_and_target(
    tmp_path: Path, host: Any
) -> None:
    case_dir = await record_offline("contact-form", {"name": "Ada"}, tmp_path / "contact", host)
    broken = changed_recipe(
        tmp_path,
        "contact-form",
        "click: {target: {role: button, name: Send}}",
        "click: {target: {role: button, name: Dispatch}}\n    timeout: 400",
    )
    replay = await replay_case(
        case_dir, artifacts=tmp_path / "out", recipe_path=broken, shared=host
    )
    assert not replay.passed
    message = replay.explain()
    assert "TARGET_MISSING at step 'send'" in message
    assert 'no element matches button "Dispatch" (waited 400 ms' in message
    assert "the recipe changed since the case was recorded" in message
    assert "step-06-attach.html" in message  # the page as it was before the failing step
    assert (tmp_path / "out" / "iteration-0001-failure-site.png").is_file()


async def test_a_request_the_recording_lacks_is_aborted_and_named(
    tmp_path: Path, host: Any
) -> None:
    case_dir = await record_offline("publish-post", {"title": "Hi"}, tmp_path / "post", host)
    detour = changed_recipe(
        tmp_path,
        "publish-post",
        "  - id: title\n",
        "  - id: detour\n    tab: admin\n    goto: /menu\n  - id: title\n",
    )
    replay = await replay_case(
        case_dir, artifacts=tmp_path / "out", recipe_path=detour, shared=host
    )
    assert replay.result.reason_code == "NAVIGATION_FAILED"
    assert replay.result.failing_step == "detour"
    assert f"not in the recording, so aborted: {load_case(case_dir).base_url}/menu" in (
        replay.result.reason or ""
    )


async def test_a_secret_is_never_recorded_and_replay_asks_for_it(
    tmp_path: Path, host: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = {"password": DEMO_PASSWORD}
    case_dir = await record_offline("login", params, tmp_path / "login", host)
    for file in case_dir.iterdir():
        assert DEMO_PASSWORD not in file.read_text(encoding="utf-8"), file.name
    assert load_case(case_dir).params["password"] == "<secret:password>"

    monkeypatch.delenv("NORTHSTAR_SECRET_PASSWORD", raising=False)
    with pytest.raises(ParamMissing, match="password"):
        await replay_case(case_dir, artifacts=tmp_path / "out", shared=host)
    monkeypatch.setenv("NORTHSTAR_SECRET_PASSWORD", DEMO_PASSWORD)
    replay = await replay_case(case_dir, artifacts=tmp_path / "out", shared=host)
    assert replay.passed, replay.explain()
