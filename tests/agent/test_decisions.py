"""The agent path's decisions on plain data: tabs, calls, references, answers, submissions."""

from __future__ import annotations

import pytest

import northstar.agent
from northstar.agent.actions import (
    act_request,
    build_step,
    element_target,
    input_fingerprint,
    submission_step_id,
)
from northstar.agent.references import TabView, resolve, shows_whole_page
from northstar.agent.rendering import render_changes, render_page
from northstar.agent.tabs import bind_session_tabs
from northstar.errors import StaleReference, UsageInvalid
from northstar.monitor.observation import Observation, build_observation, node_label
from northstar.monitor.screen_change import ScreenChangeSettings, screen_change

URL = "http://site.test/menu"
CLOSED = """
- heading "Menu" [level=1] [ref=e2]
- navigation "Main" [ref=e3]:
  - button "Menu" [ref=e4]
- textbox "Password" [ref=e5]: "[redacted]"
"""
OPEN = """
- heading "Menu" [level=1] [ref=e2]
- navigation "Main" [ref=e3]:
  - button "Menu" [expanded] [ref=e4]
  - menu "Main menu" [ref=e9]:
    - menuitem "Profile" [ref=e10]
- textbox "Password" [ref=e5]: "[redacted]"
"""


def observed(text: str, *, url: str = URL, snapshot: str = "s1") -> Observation:
    return build_observation(tab="main", url=url, snapshot_text=text, snapshot_id=snapshot)


def test_the_public_names_are_pinned() -> None:
    assert northstar.agent.__all__ == [
        "ActAnswer",
        "AgentHost",
        "AgentSettings",
        "CheckAnswer",
        "ObserveAnswer",
        "RecipeSaved",
        "SessionClosed",
        "SessionOpened",
        "TabsAnswer",
        "open_agent_host",
    ]


# Tabs


def test_tabs_are_bound_with_their_origins_normalised() -> None:
    tabs = bind_session_tabs(
        {
            "shop": {"start": "http://Shop.test:8080/a?b=1"},
            "admin": {
                "start": "https://a.test/x",
                "origins": ["https://A.test/y", "http://b.test"],
            },
        }
    )
    assert tabs["shop"].origins == ("http://shop.test:8080",)
    assert tabs["admin"].origins == ("https://a.test", "http://b.test")
    assert tabs["admin"].start == "https://a.test/x"


@pytest.mark.parametrize(
    ("tabs", "fragment"),
    [
        ({}, "1 to 8 tab roles"),
        ({"1st": {"start": "http://a.test/"}}, "tab role '1st'"),
        ({"main": {"start": "/relative"}}, "not an absolute http"),
        ({"main": {"start": "file:///etc/passwd"}}, "not an absolute http"),
        ({"main": {"start": "http://a.test/", "origins": ["http://b.test"]}}, "outside its own"),
        ({"main": {"start": "http://a.test/", "opened_by": "x"}}, "opened_by"),
        ({"main": "http://a.test/"}, "main"),
    ],
)
def test_bad_tabs_are_usage_errors_naming_the_problem(tabs: dict, fragment: str) -> None:
    with pytest.raises(UsageInvalid, match=fragment):
        bind_session_tabs(tabs)


# Calls


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"action": "drag", "ref": "e1"}, "unknown action"),
        ({"action": "click"}, "needs a ref"),
        ({"action": "click", "ref": "e1", "target": {"text": "x"}}, "not both"),
        ({"action": "click", "ref": "e1", "value": "x"}, "takes no value"),
        ({"action": "fill", "ref": "e1"}, "needs a value"),
        ({"action": "goto", "ref": "e1", "value": "/x"}, "not an element"),
        ({"action": "click", "target": {"role": "button", "label": "x"}}, "exactly one of"),
        ({"action": "click", "ref": "e1", "key": "k1"}, "key goes with submit"),
        ({"action": "click", "ref": "e1", "submit": True, "key": "no spaces"}, "key goes"),
        ({"action": "fill", "ref": "e1", "value": ["a", "b"]}, "needs a text value"),
    ],
)
def test_bad_calls_are_usage_errors(kwargs: dict, fragment: str) -> None:
    with pytest.raises(UsageInvalid, match=fragment):
        act_request("main", **kwargs)


def test_a_call_becomes_the_step_a_recipe_would_run() -> None:
    request = act_request("main", "select", ref="e7", value=["a", "b"], submit=True)
    described = element_target("combobox", "Topic")
    step = build_step(request, described, step_id="submit.x", index=3, timeout_ms=500)
    assert step.step.select is not None
    assert step.step.select.values == ["a", "b"]
    assert step.step.select.target.describe() == 'combobox "Topic"'
    assert step.is_submit
    assert (step.timeout_ms, step.retry.attempts, step.index) == (500, 1, 3)
    press = build_step(
        act_request("main", "press", value="Enter"), None, step_id="a", index=1, timeout_ms=9
    )
    assert press.step.press is not None
    assert press.step.press.target is None


def test_a_submission_key_is_the_call_itself_unless_one_is_given() -> None:
    secret = b"k" * 32
    by_ref = act_request("main", "click", ref="f2e27", submit=True)
    same = act_request("main", "click", ref="f2e27", submit=True)
    other_page = act_request("main", "click", ref="f3e27", submit=True)
    keyed = act_request("main", "click", ref="f3e27", submit=True, key="order-1")
    assert submission_step_id(secret, by_ref) == submission_step_id(secret, same)
    assert submission_step_id(secret, by_ref) != submission_step_id(secret, other_page)
    assert submission_step_id(secret, keyed) == "submit.order-1"
    # Inputs compare what the element is, not its reference; typed text only as a digest.
    assert input_fingerprint(secret, by_ref, 'button "Send"') == input_fingerprint(
        secret, other_page, 'button "Send"'
    )
    fill = act_request("main", "fill", ref="e5", value="Hunter2", submit=True)
    assert "Hunter2" not in input_fingerprint(secret, fill, 'textbox "Password"')
    assert input_fingerprint(b"j" * 32, fill, "x") != input_fingerprint(secret, fill, "x")


# References


def test_a_reference_acts_only_while_it_is_in_the_latest_current_observation() -> None:
    view = TabView("main")
    with pytest.raises(StaleReference, match="not observed yet"):
        resolve(view, "e4")
    view.saw(observed(OPEN))
    reference, node = resolve(view, "e10")
    assert (node.role, node.name, reference.snapshot_id) == ("menuitem", "Profile", "s1")
    view.saw(observed(CLOSED, snapshot="s2"))
    assert resolve(view, "e4")[0].snapshot_id == "s2"  # unchanged element, same reference
    with pytest.raises(StaleReference, match=r"'e10' \(menuitem \"Profile\"\).*gone"):
        resolve(view, "e10")
    with pytest.raises(StaleReference, match="no observation showed it"):
        resolve(view, "e77")
    view.current = False
    with pytest.raises(StaleReference, match=r"button \"Menu\".*no longer current"):
        resolve(view, "e4")


def test_an_unchanged_page_seen_again_keeps_the_labels_newest_first() -> None:
    view = TabView("main")
    looks = [observed(OPEN), observed(CLOSED, snapshot="s2")]
    looks.append(observed(CLOSED, snapshot="s3").model_copy(update={"nodes": looks[1].nodes}))
    expected: dict[str, str] = {}
    for look in looks:  # what TabView.saw promises: every reference, latest last
        view.saw(look)
        for node in look.nodes:
            if node.ref is not None:
                expected.pop(node.ref, None)
                expected[node.ref] = node_label(node.role, node.name)
    assert list(view.labels.items()) == list(expected.items())
    assert view.latest is looks[2]
    assert view.current


def test_the_whole_page_is_shown_first_on_request_and_on_a_new_page_or_document() -> None:
    closed, opened = observed(CLOSED), observed(OPEN, snapshot="s2")
    assert shows_whole_page(None, closed, full=False)
    assert not shows_whole_page(closed, opened, full=False)
    assert shows_whole_page(closed, opened, full=True)
    assert shows_whole_page(closed, observed(OPEN, url=URL + "?x=1"), full=False)
    renumbered = observed(OPEN.replace("[ref=e", "[ref=f1e"), snapshot="s3")
    assert shows_whole_page(closed, renumbered, full=False)


# Answers


def test_the_whole_page_is_one_line_per_meaningful_node_with_references() -> None:
    text = render_page(observed(OPEN))
    assert text.splitlines() == [
        'tab "main": <http://site.test/menu>',
        '- heading "Menu" [level=1] [ref=e2]',
        '- navigation "Main"',  # a landmark: read, never acted on, so no reference
        '  - button "Menu" [expanded] [ref=e4]',
        '  - menu "Main menu" [ref=e9]',
        '    - menuitem "Profile" [ref=e10]',
        '- textbox "Password" [ref=e5]: [redacted]',
    ]
    assert render_page(observed(OPEN), max_lines=2).endswith("(and 4 more lines: the page is long)")


def test_changes_name_what_appeared_changed_and_went_with_current_references() -> None:
    closed, opened = observed(CLOSED), observed(OPEN, snapshot="s2")
    text = render_changes(screen_change(closed, opened), opened)
    assert text.splitlines()[1:] == [
        "changes since the last observation (1 changed, 2 added, 0 removed):",
        '~ button "Menu" [ref=e4]: [expanded] (was -)',
        '+ menu "Main menu" [ref=e9]',
        '+ menuitem "Profile" [ref=e10]',
    ]
    back = render_changes(screen_change(opened, closed), closed)
    assert '- menuitem "Profile"' in back.splitlines()
    assert "e10" not in back  # nothing to act on in what went away
    assert "no change since" in render_changes(screen_change(closed, closed), closed)
    few = render_changes(screen_change(closed, opened, ScreenChangeSettings(max_items=1)), opened)
    assert few.endswith("(and 2 more: observe with full=true for the whole page)")
