"""The runner feeds its own steps to a BehaviorMonitor only when asked, as advice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.cli._inputs import build_request
from northstar.journal import Journal
from northstar.monitor.behavior import BehaviorMonitor
from northstar.run.execution import execute_run
from northstar.run.monitor_feed import StepMonitor
from northstar.run.runner import ProgramRunner
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


async def test_a_monitored_run_journals_its_signals_for_the_report(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    recipe = tmp_path / "menu.yaml"
    recipe.write_text(MENU)
    request = build_request(
        {"recipe": str(recipe), "params": (), "base_url": site.base_url, "monitor": True}
    )
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=host, journal=journal)
    assert outcome.status == "verified"  # advice only
    events = readers.get_run(tmp_path / "journal.db", outcome.run_id).events
    signals = [e for e in events if e.name == "loop_signal"]
    assert signals
    assert signals[0].payload["iteration"] == 1
    assert "tulip-4711" not in str([e.payload for e in events])
