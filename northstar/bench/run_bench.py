"""The run benchmark suite (issue 7): Northstar beside hand-written Playwright.

    python -m northstar.bench [--iterations N] [--pairs N] [--runs N] [--quick]
                              [--json PATH] [--browser PATH] [--tmp-dir DIR]
                              [--only-runs | --only-signin]

One invocation starts the fixture site in a process of its own (``fixtures.site_process``:
127.0.0.1, ephemeral port, so the site's Python does not share this process), measures
every figure below on ``recipes/contact-form.yaml`` (7 steps: three fills, a select, a
check, an upload and a submitting click, with 5 expectations, ``done_when`` and 2 outputs;
it covers more step kinds than ``publish-post``), prints a table, and with ``--json PATH``
also writes the figures, the raw samples and the configuration. Progress goes to stderr.
The defaults are sized to finish within five minutes on an idle 2-core machine without
(f), whose 40 processes took 10.7 minutes on a loaded one (a loaded machine takes longer
and gives noisier figures); ``--quick`` is a small, noisier version.
Speed is measured here, never asserted.

(a) Recipe run: N iterations (``--iterations``, 20) through Northstar's real path
    (``run_recipe``, a request built as the CLI builds it, a fresh journal in a temporary
    folder, one browser per run, a fresh context per iteration) beside three hand-written
    scripts doing the same N iterations with the same browser, flags, steps, checks and
    page loads (``_recipe_runs``): ``fixtures.handwritten.contact_form`` (a fresh context
    per iteration, the recipe's semantic locators: "hand-written" below) and
    ``fixtures.handwritten.contact_form_reuse`` keeping one page for the whole loop, with
    css ids (the script people usually write) and with the semantic locators. Each round
    (``--pairs``, 7) runs all four once, in an order that rotates and reverses from round
    to round, after one unreported warm-up of each (not with ``--quick``), so a drift in
    machine speed hits every side alike; each round's ratios (Northstar / a script) are
    listed and the headlines are their medians, with the lowest and highest round. Every
    iteration must be verified and reach the server, or the suite fails. Beside the wall
    times, per iteration: this process's CPU (``time.process_time``: the Python of
    Northstar's worker or of the script) and the whole process tree's CPU (this process
    plus the Playwright driver and Chromium, reaped when the run closes its browser).
    Machine noise moves CPU far less than wall time, so it shows what Northstar costs.
    ``--only-runs`` measures this section alone.
(b) Per-step overhead in ms, without the browser's own work. Derived: the difference of
    (a) divided by N x 7 steps, median of the pairs (it includes what the adapter adds in
    the browser, exactly-one target checks and the origin guard, and is noisy). Direct:
    ``ProgramRunner`` on an in-memory fake browser that answers at once, recording into a
    real journal: median and p95 from each step's ``step_started`` to its
    ``step_finished`` (the submitting step adds an fsynced in-flight record, which is
    what the p95 shows). Whole run: ``execute_run`` on the fake browser (binding checks,
    iteration records, output files) divided by the steps it ran.
(c) Cold start: from spawning ``northstar -v --log-json run ...`` to its first
    ``step_started`` log line (browser launched, iteration context open) beside
    ``fixtures.handwritten.raw_launch`` reaching the same point, then loading the start
    page. Medians of ``--runs`` (5) interleaved runs; the ratio compares the same point.
(d) Peak memory of ``northstar run --repeat N``: the worker process's own maximum RSS and
    the largest single process it reaped (the Playwright driver or a Chromium process),
    both from ``getrusage`` in the worker at exit, and the peak total PSS of the driver
    and Chromium processes together, sampled from /proc (Linux) while the run goes on.
(e) Lanes: 12 iterations (N if smaller) on 1, 2 and 4 lanes (``--concurrency``), one after
    the other in this process, in the order 1 2 4 4 2 1 (one round with ``--quick``).
    Throughput is steady: from the run's start (browser launched) to its last result, so
    the launch does not dilute the comparison; the whole run's time is listed too.
    Beside each, the share of all CPUs that was busy (/proc/stat, Linux): 100% divided
    by the 1-lane share is the most any number of lanes could gain when the work is
    CPU-bound.
Journal (issue 3): cost per step record (``step_started`` + ``step_finished``, each
    committed), median and p95 of 2,000, measured by ``northstar.journal.bench``.
Single iteration (issue 2): wall time of a one-iteration ``northstar run`` process beside
    the hand-written script as a process, ``--runs`` interleaved pairs.
(f) Signing in once (``_signin_runs``), whole processes as a person starts them:
    ``northstar run recipes/members-note.yaml`` (``setup`` signs in once, N notes from a
    params file), the same work with ``recipes/members-note-login-each.yaml`` (a sign-in in
    every iteration), ``fixtures.handwritten.members_note_once`` (signs in once, one page),
    and ``northstar run recipes/contact-form.yaml --keep-context`` beside
    ``fixtures.handwritten.contact_form_reuse`` as a process. ``--pairs`` rounds of all
    five in the rotating order of (a), after a one-iteration warm-up of each (not with
    ``--quick``); wall and whole-tree CPU of each, and each round's ratios (``setup`` /
    signing in every iteration, ``setup`` / the script, ``--keep-context`` / the one-page
    script) with their median, lowest and highest. A run counts only if it exited 0 and
    the site, reset before it, saved every iteration's note and saw the logins the side
    makes (one, one per iteration, none). ``--only-signin`` measures this section alone.

This module is an entry point, like the CLI: it wires the hand-written baselines (which
import Playwright) in lazily, inside functions, and never imports ``browser_adapters``.
It holds the suite itself; beside it live the measured recipe (``_workload``), the fake
browser of (b) (``_fake_browser``), process timing and /proc (``_processes``), and the
table's rows and format (``_report_table``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from northstar.bench._fake_browser import runner_step_times, whole_run_seconds
from northstar.bench._processes import (
    busy_share,
    cpu_jiffies,
    northstar_program,
    peak_tree_pss,
    script_command,
    timed_lines,
    wall_seconds,
)
from northstar.bench._recipe_runs import SIDES, Timed, measure, rotation
from northstar.bench._report_table import FIGURES, Figure, pair_rows, render_table
from northstar.bench._signin_runs import (
    MEMBERS,
    MEMBERS_LOGIN_EACH,
    SIDES_BY_NAME,
    SIGNIN_SIDES,
    measure_side,
    signin_figures,
)
from northstar.bench._workload import (
    RECIPE,
    REPO,
    SENDER,
    BenchFailed,
    create_run,
    recipe_request,
    steps_per_iteration,
)
from northstar.browser.settings import BrowserSettings
from northstar.composition import run_recipe
from northstar.journal import Journal
from northstar.logs import configure_logging
from northstar.results import IterationResult

if TYPE_CHECKING:
    from fixtures.site_process import SiteProcess as Site

__all__ = ["FIGURES", "BenchConfig", "Figure", "main", "render_table", "run_suite"]

LANES = (1, 2, 4)
# Iterations per lane measurement: enough to see the lanes overlap, small enough that the
# whole suite stays under five minutes on a 2-core machine.
LANE_ITERATIONS = 12

# The CLI, reporting at exit the worker's own peak RSS and its largest reaped descendant.
MEMORY_ENTRY = """\
import atexit, json, resource, sys
def _report():
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    sys.stderr.write("northstar-bench-rss " + json.dumps([own, child]) + "\\n")
atexit.register(_report)
from northstar.__main__ import main
main()
"""
RSS_MARKER = "northstar-bench-rss "

FULL = {"iterations": 20, "pairs": 7, "runs": 5, "fake_iterations": 300, "journal_steps": 2000}
QUICK = {"iterations": 3, "pairs": 2, "runs": 2, "fake_iterations": 30, "journal_steps": 300}


@dataclass(frozen=True)
class BenchConfig:
    """The sizes of one suite run; ``--quick`` only changes the defaults."""

    iterations: int
    pairs: int
    runs: int
    fake_iterations: int
    journal_steps: int
    browser: str | None = None
    quick: bool = False
    tmp_dir: str | None = None
    only_runs: bool = False  # section (a) alone: what a change to the run path moves
    only_signin: bool = False  # section (f) alone: signing in once, keeping one page


@dataclass(frozen=True)
class Pair:
    """Wall times of one A-then-B pair, in seconds, and for (a) the worker's CPU seconds."""

    northstar_s: float
    handwritten_s: float
    northstar_cpu_s: float | None = None
    handwritten_cpu_s: float | None = None

    @property
    def ratio(self) -> float:
        return self.northstar_s / self.handwritten_s

    def to_dict(self) -> dict[str, float]:
        return asdict(self) | {"ratio": self.ratio}


@dataclass
class Report:
    """Measured values by figure key, notes for the unmeasured, and the raw samples."""

    values: dict[str, float | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Bench:
    """What every section shares: sizes, the running site, a scratch folder, the browser."""

    config: BenchConfig
    site: Site
    work: Path
    executable: str  # the baselines' --executable: the path Northstar finds, or "playwright"

    def scratch(self, name: str) -> Path:
        """A fresh folder for one run's journal and outputs."""
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.work))


def _median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def _p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _progress(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


# (a) Recipe run: Northstar and the hand-written script, interleaved


async def interleaved_rounds(bench: Bench) -> list[dict[str, Timed]]:
    """Every side once per round, in a rotating order, after a warm-up of each."""
    if not bench.config.quick:
        for side in SIDES:
            await measure(bench, side, 1)
    rounds: list[dict[str, Timed]] = []
    for number in range(1, bench.config.pairs + 1):
        iterations = bench.config.iterations
        rounds.append({side: await measure(bench, side, iterations) for side in rotation(number)})
        walls = " / ".join(f"{rounds[-1][side].wall_s:.2f}" for side in SIDES)
        _progress(f"run round {number} ({' / '.join(SIDES)}): {walls} s")
    return rounds


def _against(rounds: Sequence[dict[str, Timed]], baseline: str, figure: str) -> list[float]:
    """Northstar / ``baseline`` per round, on one of ``Timed``'s figures."""
    return [getattr(r["northstar"], figure) / getattr(r[baseline], figure) for r in rounds]


def recipe_run_section(bench: Bench, report: Report) -> list[Pair]:
    rounds = asyncio.run(interleaved_rounds(bench))
    pairs = [
        Pair(r["northstar"].wall_s, r["fresh"].wall_s, r["northstar"].cpu_s, r["fresh"].cpu_s)
        for r in rounds
    ]
    report.values["run_northstar_s"] = _median(p.northstar_s for p in pairs)
    report.values["run_handwritten_s"] = _median(p.handwritten_s for p in pairs)
    report.values["run_ratio"] = _median(p.ratio for p in pairs)
    per_iteration = 1000 / bench.config.iterations
    for side in ("northstar", "handwritten"):
        cpu = [getattr(p, f"{side}_cpu_s") for p in pairs]
        report.values[f"run_{side}_cpu_ms"] = _median(cpu) * per_iteration
    for side in SIDES:
        tree = _median(r[side].tree_cpu_s for r in rounds)
        report.values[f"run_{side}_tree_cpu_ms"] = tree * per_iteration
    for baseline in ("reuse_css", "reuse_semantic"):
        ratios = _against(rounds, baseline, "wall_s")
        report.values[f"{baseline}_s"] = _median(r[baseline].wall_s for r in rounds)
        report.values[f"{baseline}_ratio"] = _median(ratios)
        report.values[f"{baseline}_ratio_low"] = min(ratios)
        report.values[f"{baseline}_ratio_high"] = max(ratios)
        report.values[f"{baseline}_tree_cpu_ratio"] = _median(
            _against(rounds, baseline, "tree_cpu_s")
        )
        python_cpu = _median(r[baseline].cpu_s for r in rounds)
        report.values[f"{baseline}_cpu_ms"] = python_cpu * per_iteration
    report.details["run_pairs"] = [p.to_dict() for p in pairs]
    report.details["run_rounds"] = [{side: asdict(t) for side, t in r.items()} for r in rounds]
    return pairs


# (b) Per-step overhead: derived from (a), and direct on a fake browser


def step_overhead_section(bench: Bench, report: Report, pairs: Sequence[Pair]) -> None:
    steps = steps_per_iteration()
    iterations = bench.config.fake_iterations
    per_run = bench.config.iterations * steps
    derived = [(p.northstar_s - p.handwritten_s) * 1000 / per_run for p in pairs]
    with Journal.open(bench.scratch("runner") / "journal.db") as journal:
        step_ms = asyncio.run(runner_step_times(journal, iterations))
    with Journal.open(bench.scratch("whole") / "journal.db") as journal:
        whole_s = asyncio.run(whole_run_seconds(journal, iterations))
    report.values["step_overhead_derived_ms"] = _median(derived)
    report.values["step_overhead_runner_median_ms"] = _median(step_ms)
    report.values["step_overhead_runner_p95_ms"] = _p95(step_ms)
    report.values["step_overhead_whole_run_ms"] = whole_s * 1000 / (iterations * steps)


# Processes: the CLI as a person runs it, and the baselines as scripts


def northstar_arguments(bench: Bench, *extra: str, verbose: bool = False) -> list[str]:
    """The CLI's arguments for one contact-form run with a fresh journal."""
    arguments = ["-v", "--log-json"] if verbose else []
    arguments += ["run", str(RECIPE), "-p", f"name={SENDER}", "--base-url", bench.site.base_url]
    arguments += ["--journal", str(bench.scratch("cli") / "journal.db"), *extra]
    return arguments + (["--browser", bench.config.browser] if bench.config.browser else [])


def northstar_command(bench: Bench, *extra: str, verbose: bool = False) -> list[str]:
    """The ``northstar`` console script, as a person types it."""
    return northstar_program() + northstar_arguments(bench, *extra, verbose=verbose)


def baseline_command(bench: Bench, module: str, *arguments: str) -> list[str]:
    """A baseline as its own process, on the browser Northstar finds."""
    return script_command(module, *arguments, executable=bench.executable)


# (c) Cold start


def cold_start_once(bench: Bench) -> dict[str, float]:
    from fixtures.handwritten.raw_launch import CONTEXT_READY, PAGE_LOADED

    command = northstar_command(bench, verbose=True)
    northstar = timed_lines(command, cwd=bench.work, wanted={"step_started"}, on_stderr=True)
    command = baseline_command(bench, "raw_launch", f"{bench.site.base_url}/form")
    raw = timed_lines(command, cwd=REPO, wanted={CONTEXT_READY, PAGE_LOADED})
    return {
        "northstar_first_step_s": northstar["step_started"],
        "raw_context_ready_s": raw[CONTEXT_READY],
        "raw_page_loaded_s": raw[PAGE_LOADED],
    }


def cold_start_section(bench: Bench, report: Report) -> None:
    runs = [cold_start_once(bench) for _ in range(bench.config.runs)]
    northstar = _median(run["northstar_first_step_s"] for run in runs)
    context = _median(run["raw_context_ready_s"] for run in runs)
    report.values["cold_start_northstar_s"] = northstar
    report.values["cold_start_raw_context_s"] = context
    report.values["cold_start_raw_page_s"] = _median(run["raw_page_loaded_s"] for run in runs)
    report.values["cold_start_ratio"] = northstar / context
    report.details["cold_start_runs"] = runs


# (d) Peak memory


def memory_section(bench: Bench, report: Report) -> None:
    extra = ("--repeat", str(bench.config.iterations))
    command = [sys.executable, "-c", MEMORY_ENTRY, *northstar_arguments(bench, *extra)]
    log = bench.scratch("memory") / "stderr.txt"
    with (
        log.open("wb") as sink,
        subprocess.Popen(command, cwd=bench.work, stdout=subprocess.DEVNULL, stderr=sink) as proc,
    ):
        peak_kib, processes = peak_tree_pss(proc)
    marked = [line for line in log.read_text().splitlines() if line.startswith(RSS_MARKER)]
    if proc.returncode != 0 or not marked:
        raise BenchFailed(f"the memory run exited {proc.returncode}: {log.read_text()[-500:]}")
    own_kib, child_kib = json.loads(marked[-1].removeprefix(RSS_MARKER))
    report.values["memory_worker_peak_mib"] = own_kib / 1024
    report.values["memory_largest_child_mib"] = child_kib / 1024
    report.values["memory_browser_total_mib"] = peak_kib / 1024
    report.values["memory_browser_processes"] = processes


# (e) Lanes


@dataclass(frozen=True)
class LaneRun:
    """One lanes run: whole (launch included) and steady (first iteration to last result)."""

    whole_s: float
    steady_s: float
    busy: float | None  # share of all CPUs busy during the steady part; None off Linux


def lane_iterations(bench: Bench) -> int:
    return min(bench.config.iterations, LANE_ITERATIONS)


async def lanes_run(bench: Bench, count: int) -> LaneRun:
    """N iterations on ``count`` lanes through the same path as (a).

    The steady part starts when the run starts (after the browser launched) and ends with
    the last iteration's result, so the launch, the same for every count, does not dilute
    the comparison of throughputs.
    """
    base = recipe_request(bench.site.base_url, lane_iterations(bench))
    request = replace(base, concurrency=count)
    settings = BrowserSettings(executable=bench.config.browser)
    journal = bench.scratch(f"lanes-{count}") / "journal.db"
    marks: dict[str, Any] = {}

    def on_start(run_id: str) -> None:
        marks["start"], marks["cpu_start"] = time.perf_counter(), cpu_jiffies()

    def on_result(result: IterationResult) -> None:
        marks["end"], marks["cpu_end"] = time.perf_counter(), cpu_jiffies()

    started = time.perf_counter()
    outcome = await run_recipe(
        request, browser=settings, journal_path=journal, on_start=on_start, on_result=on_result
    )
    whole = time.perf_counter() - started
    if outcome.status != "verified":
        raise BenchFailed(f"the {count}-lane run ended {outcome.status}: {outcome.error}")
    busy = busy_share(marks["cpu_start"], marks["cpu_end"])
    return LaneRun(whole, marks["end"] - marks["start"], busy)


def _combined(runs: Sequence[LaneRun]) -> LaneRun:
    """Several runs of one lane count as one: summed times, time-weighted CPU share."""
    steady = sum(run.steady_s for run in runs)
    shares = [run.busy * run.steady_s for run in runs if run.busy is not None]
    busy = sum(shares) / steady if len(shares) == len(runs) else None
    return LaneRun(sum(run.whole_s for run in runs) / len(runs), steady / len(runs), busy)


def lanes_section(bench: Bench, report: Report) -> None:
    """Throughput on 1, 2 and 4 lanes, and how busy the machine was on each.

    The counts run 1 2 4, then 4 2 1 (one round with ``--quick``), so a drift in machine
    speed during the section favours no count.
    """
    iterations = lane_iterations(bench)
    order = [*LANES] if bench.config.quick else [*LANES, *reversed(LANES)]
    measured: dict[int, list[LaneRun]] = {count: [] for count in LANES}
    for count in order:
        measured[count].append(asyncio.run(lanes_run(bench, count)))
    runs = {count: _combined(done) for count, done in measured.items()}
    for count, run in runs.items():
        report.values[f"lanes_{count}_s"] = run.whole_s
        report.values[f"lanes_{count}_per_s"] = iterations / run.steady_s
        if run.busy is not None:
            report.values[f"lanes_{count}_busy_pct"] = 100 * run.busy
    report.values["lanes_speedup"] = runs[1].steady_s / runs[2].steady_s
    report.values["lanes_4_speedup"] = runs[1].steady_s / runs[4].steady_s
    if runs[1].busy:
        report.values["lanes_cpu_ceiling"] = 1 / runs[1].busy
    report.details["lanes"] = {
        count: [asdict(run) for run in done] for count, done in measured.items()
    }


# Journal cost (issue 3) and a single iteration as processes (issue 2)


def journal_section(bench: Bench, report: Report) -> None:
    from northstar.journal.bench import time_steps

    with Journal.open(bench.scratch("journal") / "journal.db") as journal:
        run_id = create_run(journal, "journal-bench", bench.config.journal_steps)
        started, finished = time_steps(journal, run_id, bench.config.journal_steps)
    per_step_us = [(a + b) / 1000 for a, b in zip(started, finished, strict=True)]
    report.values["journal_us_per_step_median"] = _median(per_step_us)
    report.values["journal_us_per_step_p95"] = _p95(per_step_us)


def cli_section(bench: Bench, report: Report) -> None:
    baseline = baseline_command(bench, "contact_form", "--base-url", bench.site.base_url)
    pairs: list[Pair] = []
    for index in range(1, bench.config.runs + 1):
        northstar = wall_seconds(northstar_command(bench), cwd=bench.work)
        pairs.append(Pair(northstar, wall_seconds(baseline, cwd=REPO)))
        _progress(f"CLI pair {index}: {northstar:.2f} s / {pairs[-1].handwritten_s:.2f} s")
    report.values["cli_northstar_s"] = _median(p.northstar_s for p in pairs)
    report.values["cli_handwritten_s"] = _median(p.handwritten_s for p in pairs)
    report.values["cli_ratio"] = _median(p.ratio for p in pairs)
    report.details["cli_pairs"] = [p.to_dict() for p in pairs]


# (f) Signing in once and keeping one page, as whole processes


async def signin_rounds(bench: Bench) -> list[dict[str, Timed]]:
    """Every command of (f) once per round, in a rotating order, after a warm-up of each."""
    if not bench.config.quick:
        for name in SIGNIN_SIDES:
            await measure_side(bench, SIDES_BY_NAME[name], 1)
    rounds: list[dict[str, Timed]] = []
    for number in range(1, bench.config.pairs + 1):
        order = rotation(number, SIGNIN_SIDES)
        iterations = bench.config.iterations
        rounds.append({n: await measure_side(bench, SIDES_BY_NAME[n], iterations) for n in order})
        walls = " / ".join(f"{rounds[-1][name].wall_s:.2f}" for name in SIGNIN_SIDES)
        _progress(f"sign-in round {number} ({' / '.join(SIGNIN_SIDES)}): {walls} s")
    return rounds


def signin_section(bench: Bench, report: Report) -> None:
    rounds = asyncio.run(signin_rounds(bench))
    report.values |= signin_figures(rounds, bench.config.iterations)
    report.details["signin_rounds"] = [{n: asdict(t) for n, t in r.items()} for r in rounds]


# The suite


def _environment(bench: Bench) -> dict[str, Any]:
    return {
        "recipe": str(RECIPE.relative_to(REPO)),
        "signin_recipes": [str(path.relative_to(REPO)) for path in (MEMBERS, MEMBERS_LOGIN_EACH)],
        "steps_per_iteration": steps_per_iteration(),
        "executable": bench.executable,
        "python": platform.python_version(),
        "playwright": metadata.version("playwright"),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg()[0],
        # The docs' benchmark page shows when the figures were taken (docs/benchmarks/).
        "started_at": datetime.now(UTC).isoformat(timespec="minutes"),
    }


def run_suite(config: BenchConfig) -> Report:
    """Every section, in one process, against one fixture site."""
    from fixtures.handwritten.launch import discover
    from fixtures.site_process import SiteProcess

    report = Report()
    with SiteProcess() as site, tempfile.TemporaryDirectory(dir=config.tmp_dir) as folder:
        bench = Bench(config, site, Path(folder), asyncio.run(discover(config.browser)))
        environment = asdict(config) | _environment(bench)
        started = time.perf_counter()
        if not config.only_signin:
            _progress(f"recipe run: {config.pairs} pairs of {config.iterations} iterations")
            pairs = recipe_run_section(bench, report)
            if not config.only_runs:
                _other_sections(bench, report, pairs)
        if not config.only_runs:
            _progress(f"signing in once: {config.pairs} rounds of {config.iterations} iterations")
            signin_section(bench, report)
        environment["suite_s"] = time.perf_counter() - started
        environment["load_average_at_end"] = os.getloadavg()[0]
    report.details["config"] = environment
    return report


def _other_sections(bench: Bench, report: Report, pairs: list[Pair]) -> None:
    """Sections (b) to (e), the journal and the single iteration, in that order."""
    config = bench.config
    _progress("per-step overhead on the fake browser")
    step_overhead_section(bench, report, pairs)
    _progress(f"cold start: {config.runs} runs")
    cold_start_section(bench, report)
    _progress("peak memory")
    memory_section(bench, report)
    _progress(f"lanes: {', '.join(map(str, LANES))}")
    lanes_section(bench, report)
    journal_section(bench, report)
    cli_section(bench, report)


# Output


def figures(report: Report, config: BenchConfig) -> list[Figure]:
    """The table's rows, in ``FIGURES`` order, with the pairs of (a) after its ratio."""
    sizes = asdict(config) | {
        "fake_steps": f"{config.fake_iterations * steps_per_iteration():,}",
        "lane_iterations": min(config.iterations, LANE_ITERATIONS),
        "journal_steps": f"{config.journal_steps:,}",
    }
    rows: list[Figure] = []
    for key, label, unit in FIGURES:
        if key in report.values:
            note = report.notes.get(key, "")
            rows.append(Figure(key, label.format(**sizes), report.values[key], unit, note))
        if key == "run_ratio":
            rows += pair_rows(report.details.get("run_pairs", []))
    return rows


def _arguments(argv: Sequence[str] | None) -> tuple[BenchConfig, str | None]:
    parser = argparse.ArgumentParser(prog="python -m northstar.bench")
    parser.add_argument("--iterations", type=int, help="iterations per recipe run (20)")
    parser.add_argument("--pairs", type=int, help="Northstar / hand-written run pairs (7)")
    parser.add_argument("--runs", type=int, help="cold-start runs and single-iteration pairs (5)")
    parser.add_argument("--fake-iterations", type=int, help="fake-browser iterations (300)")
    parser.add_argument("--journal-steps", type=int, help="journal step records (2000)")
    parser.add_argument("--quick", action="store_true", help="a small, noisier version")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--browser", help="Chromium executable for both sides")
    parser.add_argument("--tmp-dir", help="folder for the temporary journals")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--only-runs", action="store_true", help="section (a) alone")
    only.add_argument("--only-signin", action="store_true", help="section (f) alone")
    args = parser.parse_args(argv)
    defaults = QUICK if args.quick else FULL
    given = {name: getattr(args, name) for name in defaults}
    sizes: dict[str, Any] = {n: defaults[n] if v is None else v for n, v in given.items()}
    if min(sizes.values()) < 1:
        parser.error("every count must be at least 1")
    config = BenchConfig(
        **sizes,
        browser=args.browser,
        quick=args.quick,
        tmp_dir=args.tmp_dir,
        only_runs=args.only_runs,
        only_signin=args.only_signin,
    )
    return config, args.json


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite, print the table, and write the JSON file when asked."""
    config, json_path = _arguments(argv)
    configure_logging()  # warnings only: the runs are measured, not narrated
    try:
        report = run_suite(config)
    except BenchFailed as exc:
        print(f"bench failed: {exc}", file=sys.stderr)
        return 1
    rows = figures(report, config)
    print(render_table(rows))
    if json_path:
        document = {"figures": {f.key: asdict(f) for f in rows}, **report.details}
        Path(json_path).write_text(json.dumps(document, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
