"""Section (f) of the run benchmark: signing in once, and keeping one page, as processes.

Speed is measured by ``python -m northstar.bench --only-signin``, never asserted here. The
section runs for real against the fixture site at a tiny size; a command that exits 0
without doing its work (fewer notes saved, a sign-in per iteration where one was claimed)
and one that fails must fail the bench instead of being timed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from fixtures.handwritten.launch import discover
from fixtures.site_process import SiteProcess
from northstar.bench import _signin_runs, run_bench
from northstar.bench._recipe_runs import Timed
from northstar.bench._signin_runs import SIDES_BY_NAME, SIGNIN_SIDES, Side, measure_side
from northstar.bench._workload import BenchFailed

TINY = ["--only-signin", "--quick", "--pairs", "1", "--iterations", "2"]
SECTION_KEYS = {key for key, _label, _unit in run_bench.FIGURES if key.startswith("signin_")}


def test_the_figures_are_medians_and_the_spread_of_each_rounds_ratios() -> None:
    def round_of(setup: float, login_each: float, cpu: float) -> dict[str, Timed]:
        walls = {"setup": setup, "login_each": login_each, "once_script": 2.0, "fresh_script": 2.0}
        walls |= {"keep_context": 3.0, "one_page": 2.0}
        timed = {side: Timed(wall, 0.1, cpu * wall) for side, wall in walls.items()}
        return timed | {"login_each": Timed(login_each, 0.1, 8.0)}

    rounds = [round_of(1.0, 4.0, 1.0), round_of(3.0, 4.0, 2.0), round_of(2.0, 4.0, 1.0)]

    values = _signin_runs.signin_figures(rounds, iterations=10)

    assert set(values) == SECTION_KEYS
    assert values["signin_setup_s"] == 2.0
    assert values["signin_login_each_ratio"] == 0.5
    assert (values["signin_login_each_ratio_low"], values["signin_login_each_ratio_high"]) == (
        0.25,
        0.75,
    )
    assert values["signin_once_script_ratio_high"] == 1.5
    assert values["signin_keep_context_ratio"] == 1.5
    assert values["signin_setup_tree_cpu_ms"] == pytest.approx(200.0)  # 2 s over 10 iterations
    assert values["signin_login_each_tree_cpu_ratio"] == pytest.approx(0.25)  # 1/8, 6/8, 2/8


@pytest.mark.browser
def test_the_section_alone_times_verified_runs_of_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "signin.json"

    assert run_bench.main([*TINY, "--json", str(report), "--tmp-dir", str(tmp_path)]) == 0

    document = json.loads(report.read_text(encoding="utf-8"))
    assert set(document["figures"]) == SECTION_KEYS
    assert all(figure["value"] > 0 for figure in document["figures"].values())
    [only_round] = document["signin_rounds"]
    assert set(only_round) == set(SIGNIN_SIDES)
    assert document["config"]["only_signin"] is True
    table = capsys.readouterr().out
    assert all(figure["name"] in table for figure in document["figures"].values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["signin.json"]  # scratch removed


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[run_bench.Bench]:
    config = run_bench.BenchConfig(
        iterations=2, pairs=1, runs=1, fake_iterations=1, journal_steps=1, quick=True
    )
    with SiteProcess() as site:
        work = tmp_path_factory.mktemp("signin-bench")
        yield run_bench.Bench(config, site, work, asyncio.run(discover(None)))


def measured(bench: run_bench.Bench, side: Side) -> Timed:
    return asyncio.run(measure_side(bench, side, bench.config.iterations))


@pytest.mark.browser
def test_a_command_that_signs_in_every_iteration_is_not_timed_as_signing_in_once(
    bench: run_bench.Bench,
) -> None:
    claims_once = replace(SIDES_BY_NAME["setup"], command=SIDES_BY_NAME["login_each"].command)

    with pytest.raises(BenchFailed, match="setup: the site saw 2 logins, not 1"):
        measured(bench, claims_once)


@pytest.mark.browser
def test_a_command_that_exits_0_having_saved_fewer_notes_is_not_timed(
    bench: run_bench.Bench,
) -> None:
    script = SIDES_BY_NAME["once_script"]
    short = replace(script, command=lambda b, iterations: script.command(b, iterations - 1))

    with pytest.raises(BenchFailed, match="once_script: the site saved 1 of 2 notes"):
        measured(bench, short)


@pytest.mark.browser
def test_a_run_that_cannot_sign_in_fails_the_bench(
    bench: run_bench.Bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("fixtures._site_routes.DEMO_PASSWORD", "not-the-password")

    with pytest.raises(BenchFailed, match=r"exited [1-9]"):
        measured(bench, SIDES_BY_NAME["setup"])
