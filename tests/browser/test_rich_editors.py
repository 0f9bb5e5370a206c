"""Rich editors in real Chromium: a fill must reach the editor's model, not only its DOM.

The fixture's article form is a real Draft.js editor whose hidden field is written 250 ms
after the last change (as Wagtail's Draftail does), so a fill that returns before the editor
settled lets a fast Publish send an empty body. The server's own records are the oracle.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import northstar
from fixtures.site_server import FixtureSite
from tests.browser.conftest import RunText, recipe

pytestmark = pytest.mark.browser

ARTICLE_RECIPE = """\
name: publish-article
timeout: 15000
params:
  title: {type: string, required: true}
  body: {type: string, required: true}
tabs:
  site:
    start: "{{ base_url }}/articles/new"
steps:
  - id: title
    tab: site
    fill: {target: {label: Title}, value: "{{ title }}"}
  - id: body
    tab: site
    fill: {target: {role: textbox, name: Body}, value: "{{ body }}"}
  - id: publish
    tab: site
    click: {target: {role: button, name: Publish, exact: true}}
    effect: submit
    expect:
      - visible: {role: heading, name: "{{ title }}", exact: true}
      - text: {target: {role: region, name: Body}, equals: "{{ body }}"}
"""


async def test_twenty_fast_publishes_keep_every_body_on_the_server(
    tmp_path: Path, site: FixtureSite
) -> None:
    path = tmp_path / "publish-article.yaml"
    path.write_text(ARTICLE_RECIPE, encoding="utf-8")
    rows = [{"title": f"Article {n}", "body": f"Body number {n} of twenty"} for n in range(20)]
    result = await northstar.run(
        path, params=rows, base_url=site.base_url, journal=tmp_path / "journal.db"
    )
    stored = [(s["title"], s["body"]) for s in site.submissions() if s["kind"] == "article"]
    assert stored == [(row["title"], row["body"]) for row in rows]
    assert result.state == "verified"


async def test_typed_keystrokes_with_a_delay_reach_the_editor(
    run_text: RunText, site: FixtureSite
) -> None:
    steps = """
    - id: title
      tab: site
      fill: {target: {label: Title}, value: Typed}
    - id: body
      tab: site
      fill: {target: {role: textbox, name: Body}, value: "key by key", type: true, delay: 5}
    - id: publish
      tab: site
      click: {target: {role: button, name: Publish, exact: true}}
      effect: submit
      expect:
        - text: {target: {role: region, name: Body}, equals: "key by key"}
    """
    result = await run_text(recipe("/articles/new", textwrap.dedent(steps)))
    assert result.verified, result.reason
    assert [s["body"] for s in site.submissions() if s["kind"] == "article"] == ["key by key"]


async def test_an_editor_that_drops_the_text_fails_fill_not_applied(
    run_text: RunText, site: FixtureSite
) -> None:
    steps = """
    - id: body
      tab: site
      fill: {target: {role: textbox, name: Body}, value: "never kept"}
    """
    result = await run_text(recipe("/articles/new?refuse=1", textwrap.dedent(steps)))
    assert not result.verified
    assert (result.reason_code, result.failing_step) == ("FILL_NOT_APPLIED", "body")
