"""Pages that act on their own, in real Chromium: an autosave that races the publish.

The fixture's draft form saves itself (a ``fetch``) 150 ms after the last change, and the
server answers it late; the page after Publish says "Draft published" when an autosave had
created the draft first, else "New page published". The server's records are the oracle.
"""

from __future__ import annotations

import textwrap

import pytest

from fixtures.site_server import FixtureSite
from tests.browser.conftest import RunText, recipe

pytestmark = pytest.mark.browser

FILL = """
- id: title
  tab: site
  fill: {target: {label: Title}, value: "{{ title }}"}
- id: body
  tab: site
  fill: {target: {label: Body}, value: "{{ body }}"}
"""


def publish(*expect: str) -> str:
    checks = "".join(f"\n    - {each}" for each in expect)
    return (
        textwrap.dedent("""
    - id: publish
      tab: site
      click: {target: {role: button, name: Publish, exact: true}}
      effect: submit
      expect:
        - text: {target: {role: region, name: Body}, equals: "{{ body }}"}""")
        + checks
    )


PARAMS = "title: {type: string, required: true}\nbody: {type: string, required: true}"
EITHER = (
    '{any_of: [{text: {target: {role: status}, equals: "Draft published"}},'
    ' {text: {target: {role: status}, equals: "New page published"}}]}'
)
DRAFT_PUBLISHED = '{text: {target: {role: status}, equals: "Draft published"}}'


def published(site: FixtureSite) -> list[tuple[str, str]]:
    return [(s["title"], s["body"]) for s in site.submissions() if s["kind"] == "published"]


async def test_the_autosave_page_publishes_with_any_of_either_message(
    run_text: RunText, site: FixtureSite
) -> None:
    text = recipe("/drafts/new", FILL + publish(EITHER), params=PARAMS)
    rows = [{"title": f"Page {n}", "body": f"Text {n}"} for n in range(3)]
    results = [await run_text(text, row) for row in rows]
    assert [r.verified for r in results] == [True] * 3, [r.reason for r in results]
    assert published(site) == [(row["title"], row["body"]) for row in rows]


async def test_an_idle_wait_lets_the_autosave_finish_before_the_publish(
    run_text: RunText, site: FixtureSite
) -> None:
    idle = "\n- id: settled\n  tab: site\n  wait_for: {idle: 400}\n"
    text = recipe("/drafts/new", FILL + idle + publish(DRAFT_PUBLISHED), params=PARAMS)
    result = await run_text(text, {"title": "Saved first", "body": "Kept"})
    assert result.verified, result.reason
    (page,) = [s for s in site.submissions() if s["kind"] == "published"]
    assert page["draft"] != ""  # the autosave had created the draft before Publish


async def test_an_idle_wait_fails_while_the_page_keeps_requesting(
    run_text: RunText, site: FixtureSite
) -> None:
    steps = """
    - id: settled
      tab: site
      timeout: 1500
      wait_for: {idle: 1000}
    """
    site.hold("/drafts/autosave")
    try:
        text = recipe("/drafts/new", FILL + textwrap.dedent(steps), params=PARAMS)
        result = await run_text(text, {"title": "Held", "body": "Never answered"})
    finally:
        site.release_held(save=False)
    assert (result.reason_code, result.failing_step) == ("EXPECTATION_FAILED", "settled")
    assert "request(s) pending" in (result.reason or "")
