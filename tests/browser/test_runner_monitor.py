"""The runner feeds its own steps to a BehaviorMonitor only when asked, as advice."""

from __future__ import annotations

from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.monitor import BehaviorMonitor
from northstar.monitoring import StepMonitor
from northstar.runner import ProgramRunner
from tests.conftest import make_plan

pytestmark = pytest.mark.browser

TOGGLES = "\n".join(
    f"""  - id: toggle-{i}
    tab: site
    click: {{target: {{role: button, name: Menu}}}}"""
    for i in range(1, 7)
)

MENU = f"""
name: menu-toggle
params:
  secret_word: {{type: string, secret: true, default: "tulip-4711"}}
tabs:
  site: {{start: "{{{{ base_url }}}}/menu"}}
steps:
{TOGGLES}
"""


async def test_toggling_a_menu_back_and_forth_raises_an_advisory_signal(
    host: Any, site: FixtureSite
) -> None:
    plan = make_plan(MENU, base_url=site.base_url)
    monitor = StepMonitor(BehaviorMonitor(), observe=True)
    result = await ProgramRunner(host, monitor=monitor).run_iteration(plan)
    assert result.verified  # a signal is a hint; it neither fails nor completes anything
    assert result.signals
    signal = result.signals[0]
    assert signal["tab"] == "site"
    assert "tulip-4711" not in str(result.signals)


async def test_the_stored_path_records_nothing_without_a_monitor(
    host: Any, site: FixtureSite
) -> None:
    plan = make_plan(MENU, base_url=site.base_url)
    result = await ProgramRunner(host).run_iteration(plan)
    assert result.verified
    assert result.signals == ()
