"""Tab roles: opened at ``start`` by the runner, or bound to the popup of a named step.

Steps address roles, never "the active tab": the chooser popup is driven by role while the
opener is checked by role, and a role whose page closed is TAB_CLOSED, not another tab.
"""

from __future__ import annotations

import pytest

from fixtures.site_server import FixtureSite
from northstar.results import IterationState
from tests.browser.conftest import LOADED, RunText, recipe

pytestmark = pytest.mark.browser

OPENERS = {
    "target-blank-link": "{role: link, name: Open chooser, exact: true}",
    "window-open-button": "{role: button, name: Open chooser window}",
}


def chooser_recipe(opener: str, chooser_steps: str) -> str:
    return f"""
name: chooser
tabs:
  opener: {{start: "{{{{ base_url }}}}/popup/opener"}}
  chooser: {{opened_by: open-chooser}}
steps:
  - id: open-chooser
    tab: opener
    click: {{target: {opener}}}
{chooser_steps}
"""


APPLY_GREEN = """
  - id: colour
    tab: chooser
    select: {target: {label: Colour}, label: Green}
  - id: apply
    tab: chooser
    click: {target: {role: button, name: Apply}}
    effect: submit
    expect:
      - text: {target: {role: status}, equals: Applied}
  - id: opener-shows-choice
    tab: opener
    verify_outcome: {text: {target: {role: status}, equals: "Chosen colour: Green"}}
"""


async def test_start_role_opens_at_its_destination(run_text: RunText, site: FixtureSite) -> None:
    result = await run_text(
        recipe(
            "/items?page=4",
            """
            - id: page-4
              tab: site
              verify_outcome:
                text: {target: {text: "Page 4 of", exact: false}, equals: "Page 4 of 10"}
            """,
        )
    )
    assert result.verified, result.reason
    opened = result.steps[0].evidence[0]
    assert (opened.kind, opened.tab) == ("tab_opened", "site")
    assert opened.found == f"{site.base_url}/items?page=4"


@pytest.mark.parametrize("opener", OPENERS.values(), ids=OPENERS.keys())
async def test_popup_role_is_driven_by_name(
    run_text: RunText, site: FixtureSite, opener: str
) -> None:
    result = await run_text(chooser_recipe(opener, APPLY_GREEN))
    assert result.verified, result.reason
    opener_opened, acted_on, popup_opened = result.steps[0].evidence
    assert (opener_opened.tab, acted_on.tab, popup_opened.tab) == ("opener", "opener", "chooser")
    assert acted_on.kind == "acted_on"
    assert popup_opened.kind == "tab_opened"
    assert popup_opened.found.endswith("/popup/child")
    assert [s["colour"] for s in site.submissions()] == ["green"]


async def test_two_start_roles_are_separate_tabs(run_text: RunText, site: FixtureSite) -> None:
    text = """
name: two-roles
tabs:
  editor: {start: "{{ base_url }}/posts/new"}
  listing: {start: "{{ base_url }}/items?page=1"}
steps:
  - id: listing-first
    tab: listing
    click: {target: {role: link, name: Next}}
  - id: title
    tab: editor
    fill: {target: {label: Title}, value: Separate}
  - id: listing-untouched
    tab: listing
    verify_outcome: {url: "**/items?page=2"}
  - id: publish
    tab: editor
    click: {target: {role: button, name: Publish}}
    effect: submit
    expect:
      - url: "**/posts?created=Separate"
done_when:
  - {tab: listing, title: {equals: Items}}
  - {tab: editor, title: {equals: Posts}}
"""
    result = await run_text(text)
    assert result.verified, result.reason
    assert site.submission_count("post") == 1


async def test_iframe_targets_by_title_name_or_css(run_text: RunText, site: FixtureSite) -> None:
    result = await run_text(
        recipe(
            "/frame",
            """
            - id: holder
              tab: site
              fill: {target: {label: Card holder, frame: Payment frame}, value: Grace Hopper}
            - id: pay
              tab: site
              click: {target: {role: button, name: Pay, frame: payment}}
              effect: submit
              expect:
                - text:
                    target: {role: status, frame: "iframe[title='Payment frame']"}
                    equals: Payment accepted for Grace Hopper
                - url: "**/frame"
            """,
        )
    )
    assert result.verified, (result.failing_step, result.reason)
    assert [s["holder"] for s in site.submissions()] == ["Grace Hopper"]
    # What was acted on is read inside the frame, like the action.
    found = [e.found for s in result.steps for e in s.evidence if e.kind == "acted_on"]
    assert found[0] == 'textbox "Card holder" <input type=text>'
    assert found[1].startswith('button "Pay" <button>; submits form: POST http://')


async def test_iframe_content_is_not_found_outside_the_frame(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/frame",
            LOADED
            + """
- id: holder
  tab: site
  timeout: 400
  fill: {target: {label: Card holder}, value: Nobody}
""",
        )
    )
    assert result.reason_code == "TARGET_MISSING", result.reason


async def test_closed_popup_is_tab_closed(run_text: RunText) -> None:
    closing = """
  - id: close
    tab: chooser
    click: {target: {role: button, name: Close}}
  - id: apply-after-close
    tab: chooser
    click: {target: {role: button, name: Apply}}
"""
    result = await run_text(chooser_recipe(OPENERS["window-open-button"], closing))
    assert result.state is IterationState.FAILED
    assert (result.reason_code, result.failing_step) == ("TAB_CLOSED", "apply-after-close")
    assert "chooser" in (result.reason or "")
    assert [s.status for s in result.steps[:2]] == ["passed", "passed"]


async def test_opener_keeps_working_after_its_popup_closed(run_text: RunText) -> None:
    closing = """
  - id: close
    tab: chooser
    click: {target: {role: button, name: Close}}
  - id: opener-alive
    tab: opener
    verify_outcome: {text: {target: {role: status}, equals: No choice yet}}
"""
    result = await run_text(chooser_recipe(OPENERS["target-blank-link"], closing))
    assert result.verified, result.reason
