"""Observation capture and the monitor in a real headless Chromium, on the fixture site."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page
from structlog.testing import capture_logs

from browser_adapters.observation_capture import capture_observation, reference_locator
from fixtures.site_server import FixtureSite
from northstar.errors import StaleReference, TabClosed
from northstar.monitor.behavior import BehaviorMonitor, LoopSignal
from northstar.monitor.fingerprints import (
    ActionRecord,
    fingerprint_observation,
    observation_state_key,
)
from northstar.monitor.observation import Observation
from northstar.monitor.screen_change import screen_change

pytestmark = pytest.mark.browser


@pytest.fixture
def browser(host: Any) -> Browser:
    """The session's Chromium (found like every run finds it), so nothing is skipped."""
    launched: Browser = host.browser
    return launched


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context()
    try:
        yield await context.new_page()
    finally:
        await context.close()


@pytest.fixture
def base(site: FixtureSite) -> str:
    return site.base_url


def node_ref(observation: Observation, role: str, name: str) -> str:
    node = next(n for n in observation.nodes if n.role == role and n.name == name)
    assert node.ref is not None
    return node.ref


async def act(page: Page, observation: Observation, role: str, name: str) -> ActionRecord:
    """Click through a reference of the current observation, as an agent would."""
    ref = node_ref(observation, role, name)
    await reference_locator(page, observation, ref).click()
    return ActionRecord.on_reference("click", observation, ref, executed=True)


def raised(results: list[LoopSignal | None]) -> list[LoopSignal]:
    return [r for r in results if r is not None]


# Capture


async def test_capture_reads_url_frames_nodes_and_tables(page: Page, base: str) -> None:
    await page.goto(f"{base}/items?page=2")
    observation = await capture_observation(page, role="admin")
    assert observation.tab == "admin"
    assert observation.url == f"{base}/items?page=2"
    assert observation.title == "Items"
    assert [f.url for f in observation.frames] == [observation.url]
    (table,) = observation.tables
    assert table.headers == ("Number", "Name")
    assert table.rows[0] == ("6", "Item 6")
    assert "Page 2 of 10" in observation.text
    assert node_ref(observation, "link", "Next")


async def test_capture_covers_iframes_and_acts_inside_them(page: Page, base: str) -> None:
    await page.goto(f"{base}/frame")
    await page.frame_locator("iframe").get_by_role("button", name="Pay").wait_for()
    observation = await capture_observation(page, role="checkout")
    _main, inner = observation.frames
    assert (inner.parent, inner.name, inner.url) == (0, "payment", f"{base}/frame/inner")
    holder = next(n for n in observation.nodes if n.name == "Card holder" and n.ref)
    assert holder.path[0] == "iframe"
    await reference_locator(page, observation, holder.ref or "").fill("Ann Smith")
    again = await capture_observation(page, role="checkout")
    assert next(n for n in again.nodes if n.name == "Card holder" and n.ref).value == "Ann Smith"


async def test_capture_reads_media_state(page: Page, base: str) -> None:
    await page.goto(f"{base}/media")
    observation = await capture_observation(page, role="admin")
    media = {m.kind: m for m in observation.media}
    assert media["image"].name == "Logo"
    assert media["image"].loaded is True
    assert len(media["image"].src) < 200  # a long data: URL is shortened, not copied
    assert media["video"].paused is True
    assert media["video"].muted is False
    assert media["audio"].name == "Jingle"
    await page.evaluate("document.querySelector('video').muted = true")
    muted = await capture_observation(page, role="admin")
    assert observation_state_key(muted) != observation_state_key(observation)
    (change,) = screen_change(observation, muted).changed
    assert change.role == "video"


async def test_password_fields_and_secrets_are_redacted_at_capture(page: Page, base: str) -> None:
    await page.goto(f"{base}/login")
    await page.get_by_label("Username").fill("alice-the-user")
    await page.get_by_label("Password").fill("Hunter2-Sekrit")
    observation = await capture_observation(page, role="admin", secret_values=["alice-the-user"])
    password = next(n for n in observation.nodes if n.role == "textbox" and n.name == "Password")
    assert (password.value, password.sensitive) == ("[redacted]", True)
    username = next(n for n in observation.nodes if n.role == "textbox" and n.name == "Username")
    assert (username.value, username.sensitive) == ("[redacted]", False)
    dumped = observation.model_dump_json()
    assert "Hunter2-Sekrit" not in dumped
    assert "alice-the-user" not in dumped
    # The password field's reference still works: it came from the same snapshot.
    await reference_locator(page, observation, password.ref or "").fill("other")


async def test_a_fresh_capture_of_the_same_page_is_the_same_state(page: Page, base: str) -> None:
    await page.goto(f"{base}/menu")
    first = await capture_observation(page, role="admin")
    second = await capture_observation(page, role="admin")
    assert first.snapshot_id != second.snapshot_id
    assert fingerprint_observation(first) == fingerprint_observation(second)


async def test_references_are_valid_only_in_the_current_observation(page: Page, base: str) -> None:
    await page.goto(f"{base}/menu")
    first = await capture_observation(page, role="admin", snapshot_id="first")
    ref = node_ref(first, "button", "Menu")
    await reference_locator(page, first, ref).click()
    current = await capture_observation(page, role="admin", snapshot_id="second")
    with pytest.raises(StaleReference, match="observe the tab again"):
        reference_locator(page, current, first.reference(ref))
    with pytest.raises(StaleReference):
        reference_locator(page, current, "e999")
    await reference_locator(page, current, current.reference(ref)).click()
    assert await page.get_attribute("#menu-button", "aria-expanded") == "false"


async def test_a_closed_tab_is_a_clear_error(browser: Browser) -> None:
    context = await browser.new_context()
    try:
        closed = await context.new_page()
        await closed.close()
        with pytest.raises(TabClosed):
            await capture_observation(closed, role="preview")
    finally:
        await context.close()


# The monitor on real pages


async def test_the_same_click_five_times_signals_and_four_do_not(page: Page, base: str) -> None:
    await page.goto(f"{base}/menu")
    assert raised(await _delete_clicks(page, BehaviorMonitor(), 4)) == []

    await page.goto(f"{base}/menu")
    signals = raised(await _delete_clicks(page, BehaviorMonitor(), 5))
    assert [s.kind for s in signals] == ["repeated_actions"]
    assert signals[0].repeated_actions == 5
    assert signals[0].state_revisits >= 3


async def _delete_clicks(
    page: Page, monitor: BehaviorMonitor, times: int
) -> list[LoopSignal | None]:
    """Click the first "Delete": the status changes once, then the page stays the same."""
    current = await capture_observation(page, role="admin")
    results = [monitor.record_observation(current)]
    for _ in range(times):
        ref = next(n.ref for n in current.nodes if n.name == "Delete" and n.ref)
        await reference_locator(page, current, ref).click()
        results.append(
            monitor.record_action(ActionRecord.on_reference("click", current, ref, executed=True))
        )
        current = await capture_observation(page, role="admin")
        results.append(monitor.record_observation(current))
    return results


async def test_a_menu_toggled_three_times_signals_though_the_dom_changed(
    page: Page, base: str
) -> None:
    await page.goto(f"{base}/menu")
    monitor = BehaviorMonitor()
    markers: set[str | None] = set()
    current = await capture_observation(page, role="admin")
    results = [monitor.record_observation(current)]
    for _ in range(6):  # open, close, three times
        results.append(monitor.record_action(await act(page, current, "button", "Menu")))
        markers.add(await page.get_attribute("#menu-area", "data-render"))
        current = await capture_observation(page, role="admin")
        results.append(monitor.record_observation(current))
    assert len(markers) == 6  # the DOM was different every time
    signals = raised(results)
    assert len(signals) == 1
    assert signals[0].kind in {"repeated_actions", "action_cycle"}


async def test_pagination_through_ten_pages_does_not_signal(page: Page, base: str) -> None:
    await page.goto(f"{base}/items?page=1")
    monitor = BehaviorMonitor()
    current = await capture_observation(page, role="admin")
    results = [monitor.record_observation(current)]
    for number in range(2, 11):
        results.append(monitor.record_action(await act(page, current, "link", "Next")))
        await page.wait_for_url(f"**/items?page={number}")
        current = await capture_observation(page, role="admin")
        results.append(monitor.record_observation(current))
    assert "Page 10 of 10" in current.text
    assert raised(results) == []


async def test_ten_passive_waits_on_an_unchanged_page_do_not_signal(page: Page, base: str) -> None:
    await page.goto(f"{base}/menu")
    monitor = BehaviorMonitor()
    results: list[LoopSignal | None] = []
    for _ in range(10):
        await page.get_by_role("heading", name="Menu").wait_for()
        waited = ActionRecord.create("wait_for", tab="admin", executed=True)
        results.append(monitor.record_action(waited))
        results.append(monitor.record_observation(await capture_observation(page, role="admin")))
    assert raised(results) == []


async def test_moving_between_two_unchanged_tabs_does_not_signal(page: Page, base: str) -> None:
    other = await page.context.new_page()
    await page.goto(f"{base}/menu")
    await other.goto(f"{base}/items?page=1")
    monitor = BehaviorMonitor()
    results: list[LoopSignal | None] = []
    for _ in range(6):
        for role, tab in (("admin", page), ("preview", other)):
            await tab.bring_to_front()
            results.append(monitor.record_observation(await capture_observation(tab, role=role)))
    assert raised(results) == []


async def test_a_password_typed_five_times_signals_without_leaking(page: Page, base: str) -> None:
    password, username = "Hunter2-Sekrit", "alice-the-user"
    await page.goto(f"{base}/login")
    monitor = BehaviorMonitor()
    results: list[LoopSignal | None] = []
    with capture_logs() as logs:
        current = await capture_observation(page, role="admin", secret_values=[username])
        results.append(monitor.record_observation(current))
        for _ in range(5):
            ref = node_ref(current, "textbox", "Password")
            await reference_locator(page, current, ref).fill(password)
            record = ActionRecord.on_reference("fill", current, ref, typed=password, executed=True)
            results.append(monitor.record_action(record))
            current = await capture_observation(page, role="admin", secret_values=[username])
            results.append(monitor.record_observation(current))
    signals = raised(results)
    assert len(signals) == 1
    standing = monitor.current_signal
    assert standing is not None
    output = json.dumps([s.model_dump(mode="json") for s in (*signals, standing)]) + repr(logs)
    for leaked in (password, username, "Password", "password"):
        assert leaked not in output
