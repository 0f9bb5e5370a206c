"""The benchmark suite runs end to end in its smallest configuration and reports every figure.

Speed is measured by ``python -m northstar.bench``, never asserted here: this checks that
every section ran, that its figures reached the JSON file, and that they are numbers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from browser_adapters.host import _QUIET_ARGS
from fixtures.handwritten.launch import CHROMIUM_ARGS
from northstar.bench import run_bench

SMALLEST = ["--quick", "--pairs", "1", "--iterations", "2", "--runs", "1"]
SMALLEST += ["--fake-iterations", "5", "--journal-steps", "50"]
# A difference of two noisy wall times: on a loaded machine it may come out below zero.
DIFFERENCES = {"step_overhead_derived_ms"}


def expected_keys() -> set[str]:
    """Every figure; the CPU shares are read from /proc/stat, so only on Linux."""
    keys = {key for key, _label, _unit in run_bench.FIGURES} | {"run_pair_1_ratio"}
    cpu = {key for key in keys if key.endswith("_busy_pct") or key == "lanes_cpu_ceiling"}
    return keys if Path("/proc/stat").exists() else keys - cpu


def test_the_baseline_launches_chromium_with_the_adapters_flags() -> None:
    assert CHROMIUM_ARGS == _QUIET_ARGS


@pytest.mark.browser
def test_the_smallest_suite_reports_every_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "bench.json"
    arguments = [*SMALLEST, "--json", str(report), "--tmp-dir", str(tmp_path)]

    assert run_bench.main(arguments) == 0

    document = json.loads(report.read_text(encoding="utf-8"))
    figures = document["figures"]
    assert set(figures) == expected_keys()
    for key, figure in figures.items():
        value = figure["value"]
        if key in DIFFERENCES:
            assert math.isfinite(value), key
        else:
            assert value > 0, key
    assert len(document["run_pairs"]) == len(document["cli_pairs"]) == 1
    assert set(document["run_rounds"][0]) == {"northstar", "fresh", "reuse_css", "reuse_semantic"}
    assert len(document["cold_start_runs"]) == 1
    assert document["config"]["iterations"] == 2
    assert {count: len(runs) for count, runs in document["lanes"].items()} == {
        "1": 1,
        "2": 1,
        "4": 1,
    }
    table = capsys.readouterr().out
    assert table.splitlines()[0].startswith("metric")
    assert all(figure["name"] in table for figure in figures.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.json"]  # scratch removed
