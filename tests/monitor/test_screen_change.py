"""Screen changes between two observations of one tab (no browser)."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from northstar.monitor.observation import MediaState, Observation, build_observation
from northstar.monitor.screen_change import ScreenChangeSettings, screen_change

CLOSED = """
- heading "Menu" [level=1] [ref=e1]
- navigation "Main" [ref=e2]:
  - button "Menu" [ref=e3]
- textbox "Search" [ref=e4]: shoes
- list [ref=e5]:
  - listitem [ref=e6]: Draft A
  - listitem [ref=e7]: Draft B
"""
OPEN = """
- heading "Menu" [level=1] [ref=e11]
- navigation "Main" [ref=e12]:
  - button "Menu" [expanded] [active] [ref=e13]
  - menu "Main menu" [ref=e14]:
    - menuitem "Profile" [ref=e15]
    - menuitem "Help" [ref=e16]
- textbox "Search" [ref=e17]: boots
- list [ref=e18]:
  - listitem [ref=e19]: Draft 0
  - listitem [ref=e20]: Draft A
"""


def observe(
    text: str,
    *,
    tab: str = "admin",
    url: str = "http://site.test/menu",
    media: tuple[MediaState, ...] = (),
) -> Observation:
    return build_observation(
        tab=tab, url=url, snapshot_text=text, snapshot_id=text[-8:], media=media
    )


def test_added_removed_and_changed_nodes_by_path() -> None:
    change = screen_change(observe(CLOSED), observe(OPEN))
    added = {(i.path, i.after.value if i.after else None) for i in change.added}
    assert added == {
        (('navigation "Main"', 'menu "Main menu"'), None),
        (('navigation "Main"', 'menu "Main menu"', 'menuitem "Profile"'), None),
        (('navigation "Main"', 'menu "Main menu"', 'menuitem "Help"'), None),
        (("list", "listitem"), "Draft 0"),
    }
    assert [(i.path, i.before and i.before.value) for i in change.removed] == [
        (("list", "listitem"), "Draft B")
    ]
    changed = {i.name: (i.before, i.after) for i in change.changed}
    menu_before, menu_after = changed["Menu"]
    assert menu_before is not None
    assert menu_after is not None
    assert (menu_before.states, menu_after.states) == ((), ("expanded",))
    search_before, search_after = changed["Search"]
    assert search_before is not None
    assert search_after is not None
    assert (search_before.value, search_after.value) == ("shoes", "boots")
    assert change.left_off == 0
    assert not change.is_empty


def test_the_same_state_under_new_references_is_no_change() -> None:
    renumbered = re.sub(r"ref=e(\d+)", lambda m: f"ref=e{int(m.group(1)) + 40}", CLOSED)
    change = screen_change(observe(CLOSED), observe(renumbered))
    assert change.is_empty


def test_a_screen_change_holds_nothing_to_act_on() -> None:
    dumped = screen_change(observe(CLOSED), observe(OPEN)).model_dump_json()
    assert "ref" not in dumped
    assert not re.search(r"\be\d+\b", dumped)


def test_the_summary_is_bounded_and_counts_what_was_left_off() -> None:
    many = "\n".join(f'- button "B{i}" [ref=e{i}]' for i in range(100))
    change = screen_change(
        observe('- heading "Empty" [ref=e1]'), observe(many), ScreenChangeSettings(max_items=10)
    )
    assert len(change.added) + len(change.removed) + len(change.changed) == 10
    assert change.left_off == 91  # 100 added and 1 removed, 10 shown


def test_changed_items_come_first_when_bounded() -> None:
    change = screen_change(observe(CLOSED), observe(OPEN), ScreenChangeSettings(max_items=2))
    assert [i.change for i in change.changed] == ["changed", "changed"]
    assert change.added == ()
    assert change.removed == ()
    assert change.left_off == 5


def test_url_and_media_changes_are_reported() -> None:
    still = (MediaState(kind="video", name="Intro", paused=True, current_time=0.0),)
    playing = (MediaState(kind="video", name="Intro", paused=False, current_time=0.0),)
    change = screen_change(
        observe(CLOSED, media=still), observe(CLOSED, url="http://site.test/x", media=playing)
    )
    (item,) = change.changed
    assert (item.role, item.path) == ("video", ("media", 'video "Intro"'))
    assert item.after is not None
    assert "paused=false" in item.after.states
    assert (change.url_before, change.url_after) == ("http://site.test/menu", "http://site.test/x")
    assert not change.is_empty


def test_observations_of_different_tabs_are_refused() -> None:
    with pytest.raises(ValueError, match="compares one tab"):
        screen_change(observe(CLOSED), observe(CLOSED, tab="preview"))


def test_the_bound_is_validated() -> None:
    with pytest.raises(ValidationError):
        ScreenChangeSettings(max_items=0)
