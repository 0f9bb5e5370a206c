"""From an agent's session to a recipe that runs with no model: real Chromium, fixture site.

A scripted agent (test code, no model) explores the counted menu, follows the link to the
contact form, fills and submits it (twice: one submission), saves the session as a
recipe; ``northstar validate`` accepts the file and ``northstar run --repeat 3`` with fresh
values verifies three times, with three more submissions on the fixture server.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fixtures._site_routes import DEMO_PASSWORD
from fixtures.site_server import FixtureSite
from northstar.agent import AgentHost
from northstar.errors import RecipeInvalid, UsageInvalid
from northstar.journal import Journal
from tests.agent.conftest import ref_of
from tests.cli.test_cli_run import northstar as cli

pytestmark = pytest.mark.browser


def northstar(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own, with a journal of its own beside the session's."""
    journal = str(cwd / "run-journal.db")
    return cli(*args, cwd=cwd, extra_env={"NORTHSTAR_JOURNAL": journal}, timeout=180)


@pytest.fixture
async def savers(host: Any, journal: Journal, tmp_path: Path) -> AsyncIterator[AgentHost]:
    async with AgentHost(host, journal, recipes=tmp_path / "recipes") as started:
        yield started


async def explore_and_submit(agents: AgentHost, base: str) -> tuple[str, str]:
    """The scripted agent: the menu, the link to the form, the form, Send twice."""
    opened = await agents.open_session({"main": {"start": f"{base}/menu/counter"}})
    sid, key = opened.session_id, opened.credential
    page = (await agents.observe(sid, key, "main")).text
    menu, link = ref_of(page, 'button "Menu"'), ref_of(page, 'link "Contact form"')
    await agents.act(sid, key, "main", "click", ref=menu)  # open
    await agents.act(sid, key, "main", "click", ref=menu)  # and close
    form = (await agents.act(sid, key, "main", "click", ref=link)).page.text
    await agents.act(sid, key, "main", "fill", ref=ref_of(form, 'textbox "Name"'), value="Ada")
    await agents.act(sid, key, "main", "fill", target={"label": "Email"}, value="ada@ex.test")
    message = ref_of(form, 'textbox "Message"')
    await agents.act(sid, key, "main", "fill", ref=message, value="Hello from Ada")
    topic = ref_of(form, 'combobox "Topic"')
    await agents.act(sid, key, "main", "select", ref=topic, value="sales")
    send = ref_of(form, 'button "Send"')
    first = await agents.act(sid, key, "main", "click", ref=send, submit=True)
    again = await agents.act(sid, key, "main", "click", ref=send, submit=True)
    assert (first.dispatched, again.dispatched) == (True, False)
    assert (await agents.check(sid, key, "main", {"url": "**/form/thanks*"})).held
    return sid, key


async def test_a_session_becomes_a_recipe_that_runs_three_times_with_no_model(
    savers: AgentHost, site: FixtureSite, tmp_path: Path
) -> None:
    sid, key = await explore_and_submit(savers, site.base_url)
    assert site.submission_count() == 1

    saved = await savers.save_recipe(sid, key, "contact-from-menu")
    path = Path(saved.path)
    assert path == tmp_path / "recipes" / "contact-from-menu.yaml"
    assert path.read_text(encoding="utf-8") == saved.yaml
    assert saved.yaml in saved.text
    assert saved.definition_hash in saved.text
    assert len(saved.definition_hash) == 64
    assert "ref" not in saved.yaml
    assert "[ref=" not in saved.text
    doc = yaml.safe_load(saved.yaml)
    assert doc["tabs"] == {
        "main": {"start": "{{ base_url }}/menu/counter", "origins": ["{{ base_url }}"]}
    }
    assert doc["params"] == {
        "name": {"type": "string", "default": "Ada"},
        "email": {"type": "string", "default": "ada@ex.test"},
        "message": {"type": "string", "default": "Hello from Ada"},
        "topic": {"type": "string", "default": "sales"},
    }
    steps = {step["id"]: step for step in doc["steps"]}
    assert list(steps) == [
        "click-menu",
        "click-menu-2",
        "click-contact-form",
        "fill-name",
        "fill-email",
        "fill-message",
        "select-topic",
        "click-send",
    ]  # one Send: the answer given again is not a step; observations and checks are none
    assert steps["click-menu"]["click"] == {"target": {"role": "button", "name": "Menu"}}
    assert steps["click-contact-form"]["expect"] == [
        {"url": "**/form"},
        {"visible": {"role": "heading", "name": "Contact form"}},
    ]
    assert steps["fill-email"]["fill"] == {
        "target": {"role": "textbox", "name": "Email"},  # the agent's label, seen as role+name
        "value": "{{ email }}",
    }
    send = steps["click-send"]
    assert send["effect"] == "submit"
    assert send["click"] == {"target": {"role": "button", "name": "Send"}}
    assert send["expect"] == [
        {"url": "**/form/thanks?id=*"},
        {"visible": {"role": "heading", "name": "Thank you"}},
        {"url": "**/form/thanks*"},  # the agent's own check that held after it
    ]

    checked = northstar("validate", str(path), cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith(f"ok {path}: contact-from-menu v1, 8 steps")

    ran = northstar(
        "run", str(path), "--base-url", site.base_url, "--repeat", "3", "--json",
        "-p", "name=Grace Hopper", "-p", "email=grace@ex.test", "-p", "topic=billing",
        cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr + ran.stdout
    outcome = json.loads(ran.stdout)
    assert (outcome["status"], outcome["requested"], outcome["verified"]) == ("verified", 3, 3)
    assert outcome["model_calls"] == 0
    assert [it["model_calls"] for it in outcome["iterations"]] == [0, 0, 0]
    assert site.submission_count() == 4
    fresh = [s for s in site.submissions() if s.get("name") == "Grace Hopper"]
    assert len(fresh) == 3
    assert {(s["email"], s["topic"], s["message"]) for s in fresh} == {
        ("grace@ex.test", "billing", "Hello from Ada")
    }


async def test_a_password_typed_by_the_agent_is_written_nowhere(
    savers: AgentHost, site: FixtureSite, tmp_path: Path, journal: Journal
) -> None:
    base = site.base_url
    opened = await savers.open_session({"site": {"start": f"{base}/login"}})
    sid, key = opened.session_id, opened.credential
    answers: list[str] = [(await savers.observe(sid, key, "site")).model_dump_json()]
    page = (await savers.observe(sid, key, "site", full=True)).text
    acts = [
        ("fill", {"ref": ref_of(page, 'textbox "Username"'), "value": "demo"}),
        ("fill", {"ref": ref_of(page, 'textbox "Password"'), "value": DEMO_PASSWORD}),
        ("click", {"target": {"role": "button", "name": "Sign in"}, "submit": True}),
    ]
    for action, options in acts:
        did = await savers.act(sid, key, "site", action, **options)
        answers += [did.text, did.model_dump_json()]
    saved = await savers.save_recipe(sid, key, "sign-in")
    answers += [saved.text, saved.model_dump_json()]
    closed = await savers.close_session(sid, key)
    answers.append(closed.model_dump_json())

    doc = yaml.safe_load(saved.yaml)
    assert doc["params"]["password"] == {"type": "string", "secret": True, "required": True}
    assert doc["params"]["username"] == {"type": "string", "default": "demo"}
    assert saved.params == {"username": "default", "password": "secret"}
    sign_in = doc["steps"][-1]
    assert sign_in["effect"] == "submit"
    assert sign_in["expect"][0] == {"url": "**/account"}
    for text in answers:
        assert DEMO_PASSWORD not in text
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert Path(saved.path) in written
    assert any(p.name.startswith("journal.db") for p in written)
    for file in written:
        assert DEMO_PASSWORD.encode() not in file.read_bytes(), file

    # The saved recipe signs in when the secret is given at run time, from -p only.
    ran = northstar(
        "run", saved.path, "--base-url", base, "-p", f"password={DEMO_PASSWORD}", cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert DEMO_PASSWORD not in ran.stdout + ran.stderr


async def test_save_refuses_what_it_should_not_write(
    savers: AgentHost, site: FixtureSite, tmp_path: Path
) -> None:
    opened = await savers.open_session({"main": {"start": f"{site.base_url}/menu"}})
    sid, key = opened.session_id, opened.credential
    with pytest.raises(UsageInvalid, match="no executed action"):
        await savers.save_recipe(sid, key, "empty")
    page = (await savers.observe(sid, key, "main")).text
    await savers.act(sid, key, "main", "click", ref=ref_of(page, 'button "Menu"'))
    for bad in ("../escape", "Upper", "a/b", "", "x" * 65):
        with pytest.raises(UsageInvalid, match="not plain"):
            await savers.save_recipe(sid, key, bad)
    first = await savers.save_recipe(sid, key, "menu-open")
    with pytest.raises(UsageInvalid, match="already exists"):
        await savers.save_recipe(sid, key, "menu-open")
    again = await savers.save_recipe(sid, key, "menu-open", overwrite=True)
    assert again.definition_hash == first.definition_hash
    with pytest.raises(UsageInvalid, match="no parameter named"):
        await savers.save_recipe(sid, key, "renamed", {"nope": "x"})

    # A submission that changed nothing visible has nothing to verify: refused, by name.
    heading = {"role": "heading", "name": "Menu"}
    await savers.act(sid, key, "main", "click", target=heading, submit=True)
    with pytest.raises(RecipeInvalid, match=r"submission step 'click-menu-2'"):
        await savers.save_recipe(sid, key, "nothing-visible")
    assert not (tmp_path / "recipes" / "nothing-visible.yaml").exists()
    assert sorted(p.name for p in (tmp_path / "recipes").iterdir()) == ["menu-open.yaml"]
