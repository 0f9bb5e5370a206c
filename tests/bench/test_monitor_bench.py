"""The monitor bench runs in its smallest configuration and reports every figure.

Speed is measured by ``python -m northstar.bench.monitor_bench``, never asserted here: this
checks that the agent's ``observe`` and the monitor's per-call costs reach the table and the
JSON output as positive numbers, and that each ratio is the quotient of its two medians.
"""

from __future__ import annotations

import json

import pytest

from northstar.bench import monitor_bench

SMALLEST = ["--events", "1000", "--elements", "8", "--rounds", "1"]
OBSERVE_KEYS = {
    "observe_full_ms",
    "observe_summary_ms",
    "observe_snapshot_ms",
    "observe_full_ratio",
    "observe_summary_ratio",
    "observe_changed_ms",
    "observe_changed_ratio",
    "observe_changed_plain_ratio",
    "observe_snapshot_fill_ms",
    *(
        f"observe_{look}_cpu_ms"
        for look in ("snapshot", "snapshot_fill", "full", "summary", "changed")
    ),
}
MONITOR_KEYS = {"monitor_us_per_event", "monitor_us_per_action", "monitor_us_per_observation"}


def test_the_pure_part_reports_the_monitors_cost_per_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert monitor_bench.main([*SMALLEST, "--no-browser", "--json"]) == 0

    figures = json.loads(capsys.readouterr().out)["figures"]
    assert set(figures) >= MONITOR_KEYS
    assert not OBSERVE_KEYS & set(figures)
    assert all(figures[key]["value"] > 0 for key in MONITOR_KEYS)


@pytest.mark.browser
def test_the_json_holds_the_observe_medians_and_their_ratios(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert monitor_bench.main([*SMALLEST, "--json"]) == 0

    figures = json.loads(capsys.readouterr().out)["figures"]
    assert set(figures) >= OBSERVE_KEYS | MONITOR_KEYS
    assert all(figures[key]["value"] > 0 for key in OBSERVE_KEYS)
    snapshot = figures["observe_snapshot_ms"]["value"]
    for look in ("full", "summary"):
        ratio = figures[f"observe_{look}_ratio"]["value"]
        assert ratio == pytest.approx(figures[f"observe_{look}_ms"]["value"] / snapshot)
    changed = figures["observe_changed_ms"]["value"]
    after_fill = figures["observe_snapshot_fill_ms"]["value"]
    assert figures["observe_changed_ratio"]["value"] == pytest.approx(changed / after_fill)
    assert figures["observe_changed_ratio"]["target"] == "<= 1.1x"
    assert figures["observe_changed_plain_ratio"]["value"] == pytest.approx(changed / snapshot)
    assert figures["observe_changed_plain_ratio"]["ok"] is None


@pytest.mark.browser
def test_the_table_names_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    assert monitor_bench.main(SMALLEST) == 0

    table = capsys.readouterr().out
    assert table.splitlines()[0].startswith("metric")
    assert "agent observe, whole page, 8 elements" in table
    assert "observe what changed / aria_snapshot" in table
    assert "observe what changed after a fill / aria_snapshot after a fill" in table
    assert "observe what changed after a fill / aria_snapshot (unfilled page)" in table
    assert "monitor: record_action, mean per call" in table
