"""The BehaviorMonitor's rules, on observations built from snapshot text (no browser)."""

from __future__ import annotations

import itertools
import json
import re
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from structlog.testing import capture_logs

from northstar.monitor.behavior import BehaviorMonitor, LoopSignal, MonitorSettings
from northstar.monitor.fingerprints import ActionRecord, TargetDescription, digest_observation
from northstar.monitor.observation import Observation, build_observation

_refs = itertools.count(1)

MENU_CLOSED = """
- heading "Menu" [level=1] [ref]
- navigation "Main" [ref]:
  - button "Menu" [ref]
"""
MENU_OPEN = """
- heading "Menu" [level=1] [ref]
- navigation "Main" [ref]:
  - button "Menu" [expanded] [active] [ref]
  - menu "Main menu" [ref]:
    - menuitem "Profile" [ref]
    - menuitem "Settings" [ref]
"""
DRAFTS = """
- heading "Drafts" [level=1] [ref]
- list [ref]:
  - listitem [ref]:
    - text: Draft A
    - button "Delete" [ref]
- status [ref]: {status}
"""
LOGIN = """
- heading "Sign in" [level=1] [ref]
- textbox "Username" [ref]: alice
- textbox "Secret PIN" [ref]: {pin}
- button "Sign in" [ref]
"""
ITEMS = """
- table [ref]:
  - row [ref]:
    - cell "Item {n}" [ref]
- navigation "Pagination" [ref]:
  - link "Next" [ref]
"""


def observe(tab: str, url: str, snapshot: str, *, secrets: tuple[str, ...] = ()) -> Observation:
    """An observation with fresh reference numbers and a fresh snapshot id, like a re-render."""
    text = re.sub(r"\[ref\]", lambda _: f"[ref=e{next(_refs)}]", snapshot)
    return build_observation(
        tab=tab,
        url=url,
        snapshot_text=text,
        snapshot_id=uuid.uuid4().hex,
        secret_values=secrets,
        sensitive_refs=_password_refs(text),
    )


def _password_refs(text: str) -> set[str]:
    return set(re.findall(r'textbox "Secret PIN" \[ref=(e\d+)\]', text))


def ref_of(observation: Observation, role: str, name: str) -> str:
    node = next(n for n in observation.nodes if n.role == role and n.name == name)
    assert node.ref is not None
    return node.ref


def click(observation: Observation, role: str, name: str, *, executed: bool = True) -> ActionRecord:
    ref = ref_of(observation, role, name)
    return ActionRecord.on_reference("click", observation, ref, executed=executed)


def passive(kind: str, tab: str = "admin") -> ActionRecord:
    return ActionRecord.create(kind, tab=tab, executed=True)


def signals_of(results: list[LoopSignal | None]) -> list[LoopSignal]:
    return [r for r in results if r is not None]


# The same click, with and without revisits


def click_delete_n_times(monitor: BehaviorMonitor, times: int) -> list[LoopSignal | None]:
    """Click "Delete" ``times`` times; the status changes once, then the page stays put."""
    url = "http://site.test/drafts"
    current = observe("admin", url, DRAFTS.format(status='""'))
    results = [monitor.record_observation(current)]
    for _ in range(times):
        results.append(monitor.record_action(click(current, "button", "Delete")))
        current = observe("admin", url, DRAFTS.format(status="Deleted Draft A"))
        results.append(monitor.record_observation(current))
    return results


def test_the_same_click_five_times_with_three_revisits_signals() -> None:
    monitor = BehaviorMonitor()
    raised = signals_of(click_delete_n_times(monitor, 5))
    assert len(raised) == 1
    signal = raised[0]
    assert signal.kind == "repeated_actions"
    assert signal.repeated_actions == 5
    assert signal.cycle_period == 1
    assert signal.state_revisits >= 3
    assert signal.action_kinds == ("click",)
    assert signal.target_roles == ("button",)
    assert monitor.current_signal is not None


def test_the_same_click_four_times_does_not_signal() -> None:
    monitor = BehaviorMonitor()
    assert signals_of(click_delete_n_times(monitor, 4)) == []
    assert monitor.current_signal is None


def test_five_clicks_without_revisits_do_not_signal() -> None:
    """Adding a row each time is progress: every observation shows a new state."""
    monitor = BehaviorMonitor()
    url = "http://site.test/rows"
    current = observe("admin", url, '- button "Add row" [ref]')
    results = [monitor.record_observation(current)]
    for count in range(1, 10):
        results.append(monitor.record_action(click(current, "button", "Add row")))
        rows = "".join(f'\n- row "Row {i}" [ref]' for i in range(count))
        current = observe("admin", url, '- button "Add row" [ref]' + rows)
        results.append(monitor.record_observation(current))
    assert signals_of(results) == []


# Pagination and URLs


def test_pagination_through_ten_pages_with_next_does_not_signal() -> None:
    monitor = BehaviorMonitor()
    results: list[LoopSignal | None] = []
    for number in range(1, 11):
        page = observe("admin", f"http://site.test/items?page={number}", ITEMS.format(n=number))
        results.append(monitor.record_observation(page))
        results.append(monitor.record_action(click(page, "link", "Next")))
    assert signals_of(results) == []


def test_the_same_kind_of_action_on_different_urls_does_not_signal() -> None:
    """The same "Save" on ten different records is ten different actions."""
    monitor = BehaviorMonitor()
    results: list[LoopSignal | None] = []
    for number in range(10):
        page = observe("admin", f"http://site.test/records/{number}", '- button "Save" [ref]')
        results.append(monitor.record_observation(page))
        results.append(monitor.record_action(click(page, "button", "Save")))
        results.append(monitor.record_observation(page))
    assert signals_of(results) == []


# Cycles


def toggle_menu(monitor: BehaviorMonitor, toggles: int) -> list[LoopSignal | None]:
    """Open and close the menu ``toggles`` times; every render gets new references."""
    url = "http://site.test/menu"
    current = observe("admin", url, MENU_CLOSED)
    results = [monitor.record_observation(current)]
    for index in range(2 * toggles):
        results.append(monitor.record_action(click(current, "button", "Menu")))
        current = observe("admin", url, MENU_OPEN if index % 2 == 0 else MENU_CLOSED)
        results.append(monitor.record_observation(current))
    return results


def test_a_menu_opened_and_closed_three_times_signals() -> None:
    monitor = BehaviorMonitor()
    raised = signals_of(toggle_menu(monitor, 3))
    assert len(raised) == 1
    assert raised[0].kind == "repeated_actions"
    assert raised[0].state_revisits >= 3


def test_a_menu_opened_and_closed_once_does_not_signal() -> None:
    assert signals_of(toggle_menu(BehaviorMonitor(), 1)) == []


def test_an_open_close_cycle_through_two_buttons_is_a_cycle() -> None:
    """A-B-A-B with different buttons: period 2, the DOM rebuilt each time."""
    monitor = BehaviorMonitor()
    url = "http://site.test/panel"
    closed = '- button "Open panel" [ref]'
    opened = '- button "Close panel" [ref]\n- region "Panel" [ref]:\n  - text: Details'
    current = observe("admin", url, closed)
    results = [monitor.record_observation(current)]
    for index in range(6):
        name = "Open panel" if index % 2 == 0 else "Close panel"
        results.append(monitor.record_action(click(current, "button", name)))
        current = observe("admin", url, opened if index % 2 == 0 else closed)
        results.append(monitor.record_observation(current))
    raised = signals_of(results)
    assert [s.kind for s in raised] == ["action_cycle"]
    assert raised[0].cycle_period == 2
    assert raised[0].repeated_actions >= 5


# Stagnation


def observe_unchanged(monitor: BehaviorMonitor, times: int) -> list[LoopSignal | None]:
    return [
        monitor.record_observation(observe("admin", "http://site.test/menu", MENU_CLOSED))
        for _ in range(times)
    ]


def test_the_same_content_five_times_under_new_references_is_stagnation() -> None:
    monitor = BehaviorMonitor()
    raised = signals_of(observe_unchanged(monitor, 5))
    assert [s.kind for s in raised] == ["stagnant_observations"]
    assert raised[0].stagnant_observations == 5


def test_four_stagnant_observations_do_not_signal() -> None:
    assert signals_of(observe_unchanged(BehaviorMonitor(), 4)) == []


def test_ten_passive_waits_on_an_unchanged_page_do_not_signal() -> None:
    monitor = BehaviorMonitor()
    results = [monitor.record_observation(observe("admin", "http://site.test/", MENU_CLOSED))]
    for kind in ["wait_for", "verify_outcome", "verify_field", "extract"] * 2 + ["wait_for"] * 2:
        results.append(monitor.record_action(passive(kind)))
        results.append(
            monitor.record_observation(observe("admin", "http://site.test/", MENU_CLOSED))
        )
    assert signals_of(results) == []


def test_moving_back_and_forth_between_two_unchanged_tabs_does_not_signal() -> None:
    monitor = BehaviorMonitor()
    results: list[LoopSignal | None] = []
    for _ in range(10):
        for tab, url in (("admin", "http://site.test/menu"), ("preview", "http://site.test/")):
            results.append(monitor.record_observation(observe(tab, url, MENU_CLOSED)))
            results.append(monitor.record_action(passive("verify_outcome", tab)))
    assert signals_of(results) == []


# No observations


def test_repeated_actions_without_observations_follow_their_own_rule() -> None:
    monitor = BehaviorMonitor()
    target = TargetDescription(role="button", name="Retry")

    def retry() -> ActionRecord:
        return ActionRecord.create(
            "click", tab="admin", url="http://site.test/", target=target, executed=True
        )

    assert signals_of([monitor.record_action(retry()) for _ in range(7)]) == []
    signal = monitor.record_action(retry())
    assert signal is not None
    assert signal.kind == "repeated_actions_unobserved"
    assert signal.repeated_actions == 8
    assert signal.observations == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["click", "fill", "wait_for", "observe", "goto"]),
            st.sampled_from(["admin", "preview"]),
            st.integers(0, 2),
            st.booleans(),
        ),
        max_size=120,
    )
)
def test_the_monitor_never_raises_and_keeps_its_histories_bounded(
    events: list[tuple[str, str, int, bool]],
) -> None:
    monitor = BehaviorMonitor(MonitorSettings(action_history=8, observation_history=8))
    pages = [MENU_CLOSED, MENU_OPEN, DRAFTS.format(status="x")]
    for kind, tab, variant, executed in events:
        if kind == "observe":
            result = monitor.record_observation(observe(tab, "http://s/", pages[variant]))
        else:
            target = TargetDescription(role="button", name=f"B{variant}")
            record = ActionRecord.create(
                kind, tab=tab, target=target, typed=str(variant), executed=executed
            )
            result = monitor.record_action(record)
        assert result is None or isinstance(result, LoopSignal)
    assert len(monitor._actions) <= 8
    assert len(monitor._observations) <= 8


# Typed input and secrets


def fill(observation: Observation, name: str, text: str) -> ActionRecord:
    ref = ref_of(observation, "textbox", name)
    return ActionRecord.on_reference("fill", observation, ref, typed=text, executed=True)


def test_foo_and_foo_lowercase_are_different_actions() -> None:
    page = observe("admin", "http://site.test/search", '- textbox "Search" [ref]')
    monitor = BehaviorMonitor()
    mixed = [fill(page, "Search", "Foo") for _ in range(4)]
    mixed += [fill(page, "Search", "foo") for _ in range(4)]
    assert signals_of([monitor.record_action(a) for a in mixed]) == []

    same = BehaviorMonitor()
    raised = signals_of([same.record_action(fill(page, "Search", "Foo")) for _ in range(8)])
    assert len(raised) == 1


def test_a_password_typed_five_times_signals_with_counts_only() -> None:
    password, username = "Hunter2-Sekrit", "alice"
    url = "http://site.test/login"
    monitor = BehaviorMonitor()
    results: list[LoopSignal | None] = []
    with capture_logs() as logs:
        current = observe("admin", url, LOGIN.format(pin='""'), secrets=(username,))
        results.append(monitor.record_observation(current))
        for _ in range(5):
            results.append(monitor.record_action(fill(current, "Secret PIN", password)))
            current = observe("admin", url, LOGIN.format(pin=password), secrets=(username,))
            results.append(monitor.record_observation(current))
    raised = signals_of(results)
    assert len(raised) == 1
    signal = monitor.current_signal
    assert signal is not None
    assert signal.target_roles == ("textbox",)
    dumped = json.dumps([s.model_dump(mode="json") for s in [*raised, signal]])
    rendered = dumped + repr(logs) + repr(monitor._actions)
    for leaked in (password, password.lower(), username, "Secret PIN", "Sign in"):
        assert leaked not in rendered
    assert [e["event"] for e in logs] == ["loop_signal"]


def test_a_digest_is_never_the_typed_text() -> None:
    record = ActionRecord.create("fill", tab="admin", typed="Hunter2", executed=True)
    assert "Hunter2" not in record.model_dump_json()
    with pytest.raises(ValidationError):
        ActionRecord(kind="fill", tab="admin", input_digest="Hunter2", executed=True)


# Freezing and clearing


def test_a_signal_is_not_repeated_while_frozen_and_clears_on_progress() -> None:
    monitor = BehaviorMonitor()
    with capture_logs() as logs:
        first = signals_of(click_delete_n_times(monitor, 5))
        assert len(first) == 1
        frozen = signals_of(click_delete_n_times(monitor, 3))
        assert frozen == []
        standing = monitor.current_signal
        assert standing is not None
        assert standing.repeated_actions > first[0].repeated_actions

        # Progress: a different action that leads to a page not seen during the loop.
        done = observe("admin", "http://site.test/drafts", '- heading "All drafts deleted" [ref]')
        assert monitor.record_action(click(done, "heading", "All drafts deleted")) is None
        assert monitor.record_observation(done) is None
        assert monitor.current_signal is None

        again = signals_of(click_delete_n_times(monitor, 5))
    assert len(again) == 1
    assert [e["event"] for e in logs] == ["loop_signal", "loop_signal_cleared", "loop_signal"]


def test_a_stagnation_signal_clears_when_the_page_changes() -> None:
    monitor = BehaviorMonitor()
    assert len(signals_of(observe_unchanged(monitor, 7))) == 1
    assert monitor.current_signal is not None
    monitor.record_observation(observe("admin", "http://site.test/menu", MENU_OPEN))
    assert monitor.current_signal is None


def test_actions_that_were_not_executed_are_ignored() -> None:
    monitor = BehaviorMonitor()
    page = observe("admin", "http://site.test/", '- button "Go" [ref]')
    for _ in range(20):
        assert monitor.record_action(click(page, "button", "Go", executed=False)) is None
    assert len(monitor._actions) == 0
    assert monitor.current_signal is None


def test_a_precomputed_digest_counts_like_the_observation() -> None:
    monitor = BehaviorMonitor()
    digest = digest_observation(observe("admin", "http://site.test/", MENU_CLOSED))
    raised = signals_of([monitor.record_observation(digest) for _ in range(5)])
    assert [s.kind for s in raised] == ["stagnant_observations"]


def test_reset_forgets_the_loop() -> None:
    monitor = BehaviorMonitor()
    observe_unchanged(monitor, 5)
    monitor.reset()
    assert monitor.current_signal is None
    assert signals_of(observe_unchanged(monitor, 4)) == []


# Settings


def test_thresholds_are_settings() -> None:
    monitor = BehaviorMonitor(MonitorSettings(stagnant_observations=3))
    assert len(signals_of(observe_unchanged(monitor, 3))) == 1


@pytest.mark.parametrize(
    ("values", "fragment"),
    [
        ({"repeated_actions": 1}, "greater than or equal to 2"),
        ({"action_history": 100_000}, "less than or equal to 10000"),
        ({"action_history": 8, "unobserved_repeats": 9}, "action_history to at least 9"),
        ({"observation_history": 8, "stagnant_observations": 9}, "at least 9"),
        ({"stagnant": 5}, "Extra inputs are not permitted"),
    ],
)
def test_settings_are_validated_with_a_message_that_says_how_to_fix(
    values: dict[str, int], fragment: str
) -> None:
    with pytest.raises(ValidationError, match=fragment):
        MonitorSettings(**values)


# Fit for an agent host: re-reads, counters, advancing content, changes of course

COUNTED_MENU_CLOSED = MENU_CLOSED + "- paragraph [ref]: Opened {n} times, last at 10:{n:02d}:07\n"
COUNTED_MENU_OPEN = MENU_OPEN + "- paragraph [ref]: Opened {n} times, last at 10:{n:02d}:07\n"


def toggle_counted_menu(
    monitor: BehaviorMonitor, toggles: int, *, reads: int = 1, start: int = 0
) -> list[LoopSignal | None]:
    """Open and close a menu whose page counts the openings (and says when, to the second)."""
    url = "http://site.test/menu"
    opened = start
    current = observe("admin", url, COUNTED_MENU_CLOSED.format(n=opened))
    results = [monitor.record_observation(current)]
    for index in range(toggles):
        results.append(monitor.record_action(click(current, "button", "Menu")))
        opened += index % 2 == 0
        page = COUNTED_MENU_OPEN if index % 2 == 0 else COUNTED_MENU_CLOSED
        for _ in range(reads):
            current = observe("admin", url, page.format(n=opened))
            results.append(monitor.record_observation(current))
    return results


def test_re_reading_the_page_after_each_action_is_not_coming_back_to_it() -> None:
    """Five clicks that each add a row, each followed by four reads, a wait and a check."""
    monitor = BehaviorMonitor()
    url = "http://site.test/rows"
    current = observe("admin", url, '- button "Add row" [ref]')
    results = [monitor.record_observation(current)]
    for count in range(1, 6):
        results.append(monitor.record_action(click(current, "button", "Add row")))
        rows = "".join(f'\n- row "Row {i}" [ref]' for i in range(count))
        for kind in ("read", "wait_for", "read", "verify_outcome", "read", "read"):
            if kind != "read":
                results.append(monitor.record_action(passive(kind)))
                continue
            current = observe("admin", url, '- button "Add row" [ref]' + rows)
            results.append(monitor.record_observation(current))
    assert signals_of(results) == []
    assert monitor.current_signal is None


def test_a_return_after_an_action_still_counts_when_the_page_is_read_several_times() -> None:
    monitor = BehaviorMonitor()
    url = "http://site.test/menu"
    current = observe("admin", url, MENU_CLOSED)
    results = [monitor.record_observation(current)]
    for index in range(6):
        results.append(monitor.record_action(click(current, "button", "Menu")))
        for _ in range(3):
            current = observe("admin", url, MENU_OPEN if index % 2 == 0 else MENU_CLOSED)
            results.append(monitor.record_observation(current))
    raised = signals_of(results)
    assert len(raised) == 1
    assert raised[0].repeated_actions == 6
    assert raised[0].state_revisits == 3
    assert raised[0].observations == 6  # one per action, however often it was read


def test_an_open_close_cycle_is_a_cycle_though_a_counter_on_the_page_changes() -> None:
    monitor = BehaviorMonitor()
    results = toggle_counted_menu(monitor, 6)
    raised = signals_of(results)
    assert len(raised) == 1
    assert results.index(raised[0]) == len(results) - 1  # on the sixth open/close
    assert raised[0].state_revisits >= 3
    assert signals_of(toggle_counted_menu(BehaviorMonitor(), 5)) == []


def test_a_counter_changing_is_not_progress_but_a_new_page_is() -> None:
    monitor = BehaviorMonitor()
    assert len(signals_of(toggle_counted_menu(monitor, 6))) == 1
    assert signals_of(toggle_counted_menu(monitor, 2, start=3)) == []
    assert monitor.current_signal is not None  # new counts, same states: the loop stands
    assert monitor.record_observation(observe("admin", "http://site.test/account", ITEMS)) is None
    assert monitor.current_signal is None


MONTH = """
- heading "{month} 2025" [level=2] [ref]
- button "Previous month" [ref]
- button "Next month" [ref]
- grid "{month} 2025" [ref]:
{days}
"""
MONTH_DAYS = {"January": 31, "February": 28, "March": 31, "April": 30, "May": 31, "June": 30}


def month_page(month: str) -> str:
    days = "\n".join(f'  - gridcell "{d}" [ref]' for d in range(1, MONTH_DAYS[month] + 1))
    return MONTH.format(month=month, days=days)


def test_months_that_advance_are_progress() -> None:
    """Controls that come back (31 days, 28, 31, 30...) while the month moves on: no loop."""
    monitor = BehaviorMonitor()
    url = "http://site.test/calendar"
    current = observe("admin", url, month_page("January"))
    results = [monitor.record_observation(current)]
    for month in [*MONTH_DAYS][1:] * 2:
        results.append(monitor.record_action(click(current, "button", "Next month")))
        current = observe("admin", url, month_page(month))
        results.append(monitor.record_observation(current))
    assert signals_of(results) == []


def test_a_feed_and_rows_that_differ_only_in_their_numbers_are_progress() -> None:
    for page in (
        '- text: "Post {n}: hello"',
        '- table [ref]:\n  - row [ref]:\n    - cell "#10{n}"',
    ):
        monitor = BehaviorMonitor()
        url = "http://site.test/feed"
        more = '- button "More" [ref]\n'
        current = observe("admin", url, more + page.format(n=0))
        results = [monitor.record_observation(current)]
        for n in range(1, 10):
            results.append(monitor.record_action(click(current, "button", "More")))
            current = observe("admin", url, more + page.format(n=n))
            results.append(monitor.record_observation(current))
        assert signals_of(results) == [], page


def test_changing_course_after_a_streak_never_raises_a_new_signal() -> None:
    monitor = BehaviorMonitor()
    assert len(signals_of(click_delete_n_times(monitor, 5))) == 1
    # The page had not changed in six observations: stagnant, but the course changes now.
    page = observe("admin", "http://site.test/drafts", DRAFTS.format(status="Deleted Draft A"))
    back = ActionRecord.create(
        "click",
        tab="admin",
        url=page.url,
        target=TargetDescription(role="link", name="Back"),
        executed=True,
    )
    assert monitor.record_action(back) is None
    assert monitor.current_signal is None
    assert signals_of([monitor.record_observation(page) for _ in range(4)]) == []
    assert monitor.current_signal is None


def test_changing_course_after_a_cycle_never_raises_a_new_signal() -> None:
    monitor = BehaviorMonitor()
    assert len(signals_of(toggle_menu(monitor, 3))) == 1
    closed = observe("admin", "http://site.test/menu", MENU_CLOSED)
    assert monitor.record_action(click(closed, "heading", "Menu")) is None
    assert monitor.record_observation(closed) is None
    assert monitor.current_signal is None
