"""Sessions on admin-like pages become recipes that replay with no hand edit.

The SDK's own client drives ``northstar mcp`` (stdio) on the fixture site's admin-like
pages: a post form whose "+" opens a related-object popup that saves a category, puts it
in the opener's select and closes itself (as Django's admin does); and a page whose submit
buttons are named by a child element (as Wagtail's editor). Each session is saved, then
``northstar run saved.yaml --repeat 3`` verifies 3 of 3 with exactly 3 submissions.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from mcp import Client

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import northstar
from tests.mcp.exploration import open_agent, ref_of, told
from tests.mcp.test_save_recipe_tool import stdio_server

pytestmark = pytest.mark.browser


def run_three_times(path: str, site: FixtureSite, tmp_path: Path) -> str:
    """``northstar run PATH --repeat 3``: its output, once it verified 3 of 3."""
    ran = northstar("run", path, "--base-url", site.base_url, "--repeat", "3", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "3 of 3 iterations verified" in ran.stdout
    return ran.stdout


async def test_the_related_object_popup_is_explored_saved_and_replayed(
    site: FixtureSite, tmp_path: Path
) -> None:
    base = site.base_url
    async with Client(stdio_server(tmp_path)) as client:
        agent, _ = await open_agent(client, f"{base}/admin/posts/add")
        text, _ = told(await agent.call("observe"))
        await agent.act("fill", ref=ref_of(text, 'textbox "Title"'), value="Spring notes")
        plus = ref_of(text, 'link "Add another category"')
        opened_text, opened = await agent.act("click", ref=plus)
        assert opened["tabs_opened"] == ["popup-1"]
        assert "opened tab 'popup-1'" in opened_text
        _, listed = told(await client.call_tool("tabs", agent.session))
        assert [(t["role"], t["opened_by"]) for t in listed["tabs"]] == [
            ("main", None),
            ("popup-1", "main"),
        ]

        popup, _ = told(await agent.call("observe", tab="popup-1"))
        assert "Add category" in popup
        await agent.act("fill", tab="popup-1", ref=ref_of(popup, 'textbox "Name"'), value="Garden")
        saved_text, saved = await agent.act(
            "click", tab="popup-1", ref=ref_of(popup, 'button "Save"'), submit=True
        )
        assert saved["tabs_closed"] == ["popup-1"]
        assert saved["page"]["tab"] == "main"  # the opener's change is what the answer shows
        assert "tab 'popup-1' closed itself" in saved_text
        assert '+ option "Garden": [selected]' in saved_text
        _, listed = told(await client.call_tool("tabs", agent.session))
        assert [t["role"] for t in listed["tabs"]] == ["main"]

        main, _ = told(await agent.call("observe", full=True))
        posted_text, _ = await agent.act("click", ref=ref_of(main, 'button "Save"'), submit=True)
        assert "was added successfully" in posted_text
        assert (site.submission_count("category"), site.submission_count("admin_post")) == (1, 1)

        text, recipe = told(
            await client.call_tool("save_recipe", {**agent.session, "name": "add-post"})
        )
    doc = yaml.safe_load(recipe["yaml"])
    assert doc["tabs"]["popup-1"] == {"opened_by": "click-add-another-category"}
    # Proved before it was offered: replayed dry in a fresh context, nothing sent.
    assert recipe["proof"]["replays"] is True
    assert recipe["proof"]["stopped_before"] == "click-save"
    assert [s["outcome"] for s in recipe["proof"]["steps"]] == [
        "acted",
        "acted",
        "acted",
        "resolved (not sent)",
    ]
    assert "replays as saved up to 'click-save' (resolved, not sent)" in text
    assert (site.submission_count("category"), site.submission_count("admin_post")) == (1, 1)
    assert "each iteration appends its number" in text
    run_three_times(recipe["path"], site, tmp_path)
    assert (site.submission_count("category"), site.submission_count("admin_post")) == (4, 4)
    titles = [s["title"] for s in site.submissions() if s["kind"] == "admin_post"]
    assert titles == ["Spring notes", "Spring notes 1", "Spring notes 2", "Spring notes 3"]


async def test_buttons_named_by_a_child_element_are_saved_by_that_name(
    site: FixtureSite, tmp_path: Path
) -> None:
    base = site.base_url
    async with Client(stdio_server(tmp_path)) as client:
        agent, _ = await open_agent(client, f"{base}/admin/pages/add")
        text, _ = told(await agent.call("observe"))
        await agent.act("fill", ref=ref_of(text, 'textbox "Page title"'), value="About us")
        publish = _button_before(text, "Publish")
        published_text, _ = await agent.act("click", ref=publish, submit=True)
        assert "published" in published_text
        _, recipe = told(
            await client.call_tool("save_recipe", {**agent.session, "name": "publish-page"})
        )
    doc = yaml.safe_load(recipe["yaml"])
    click = next(step for step in doc["steps"] if "click" in step)
    assert click["click"]["target"] == {"role": "button", "name": "Publish"}
    run_three_times(recipe["path"], site, tmp_path)
    pages = [s for s in site.submissions() if s["kind"] == "admin_page"]
    assert [p["action"] for p in pages] == ["publish"] * 4  # never "Save draft"
    assert len(pages) == 4


def _button_before(text: str, child: str) -> str:
    """The reference of the nameless button whose child shows ``child``."""
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip().endswith(f": {child}"))
    return ref_of("\n".join(lines[index - 1 : index]), "button")
