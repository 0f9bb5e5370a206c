"""The cost measurement runs and prints its figures (small counts here; see the module)."""

from __future__ import annotations

from pathlib import Path

import pytest

from northstar.journal import bench


def test_bench_prints_median_and_p95(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--steps", "30", "--in-flight", "5", "--dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "step record, started+finished (NORMAL), n=30" in lines[1]
    assert "submission in flight (synchronous=FULL), n=5" in lines[4]
    assert all("median" in line and "p95" in line for line in lines[1:])
    assert list(tmp_path.iterdir()) == []  # the temporary journal is gone
