"""The long-run bench runs end to end at a small size and reports a window per 1,000 iterations.

Flatness is measured by ``python -m northstar.bench.long_run`` at 100,000 iterations, never
asserted here: this checks the windows' arithmetic and that the run really recorded its
iterations through the timed connection.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from northstar.bench import long_run
from northstar.journal import Journal


def test_windows_average_each_block_of_iterations() -> None:
    marks = [(0, 0, 0, 0.0, 0, 50.0), (1, 1000, 2, 0.001, 500, 51.0)]
    marks += [(2, 3000, 4, 0.002, 1000, 52.0), (3, 6000, 6, 0.004, 2000, 60.0)]

    found = long_run.windows(marks, size=2)

    assert [(w.first, w.last) for w in found] == [(1, 2), (3, 3)]
    assert found[0].journal_us == pytest.approx(1.5)
    assert found[1].journal_us == pytest.approx(3.0)
    assert found[0].wall_us == pytest.approx(1000.0)
    assert found[0].statements == pytest.approx(2.0)
    assert found[0].journal_cpu_us == pytest.approx(0.5)
    assert [w.peak_rss_mb for w in found] == [52.0, 60.0]  # the peak when each window closed


def test_flatness_leaves_out_a_partial_last_window() -> None:
    full = long_run.Window(1, 10, 2.0, 4.0, 1.0, 1.0)
    later = long_run.Window(11, 20, 3.0, 4.0, 1.0, 1.1)
    partial = long_run.Window(21, 22, 100.0, 100.0, 1.0, 9.0)

    assert long_run.flatness([full, later, partial]) == pytest.approx((1.5, 1.0, 1.1))


def test_a_small_long_run_records_every_iteration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal_path = tmp_path / "journal.db"

    result = long_run.measure(str(journal_path), 150)

    assert [(w.first, w.last) for w in result.windows] == [(1, 150)]
    assert result.windows[0].statements > 10  # every step went through the timed connection
    with Journal.open(journal_path) as journal:
        run_id = journal._db.one("SELECT run_id FROM runs")[0]  # type: ignore[index]
        states = journal.iteration_states(run_id)
    assert len(states) == 150
    assert {state.value for state, _ in states.values()} == {"verified"}


def test_the_command_prints_windows_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "long.json"

    assert long_run.main(["--iterations", "40", "--dir", str(tmp_path), "--json", str(report)]) == 0

    printed = capsys.readouterr().out
    assert "last/first: journal" in printed
    assert "peak RSS MB" in printed
    peak = json.loads(report.read_text(encoding="utf-8"))["windows"][0]["peak_rss_mb"]
    assert 10 < peak <= long_run.peak_rss_mb()  # a real reading, never above the peak now
    assert json.loads(report.read_text(encoding="utf-8"))["iterations"] == 40
