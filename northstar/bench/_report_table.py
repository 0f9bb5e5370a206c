"""The figures the run benchmark reports, in table order, and how they are printed.

``FIGURES`` fixes every row's key, label and unit, so the table, the JSON file and the
smoke test agree on them; ``render_table`` formats each unit alike. The suite
(``run_bench``) measures the values and fills the labels from its sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["FIGURES", "Figure", "pair_rows", "render_table"]

# The table, in order: key, label (filled from the run's sizes), unit. The per-pair rows of
# (a) follow "run_ratio"; a key a section did not report is left out. The rows of (f) are
# medians of ``--pairs`` rounds of whole processes, each ratio with its lowest and highest round.
FIGURES: tuple[tuple[str, str, str], ...] = (
    ("run_northstar_s", "(a) Northstar, {iterations} iterations (median of {pairs})", "s"),
    ("run_handwritten_s", "(a) hand-written Playwright, same work (median of {pairs})", "s"),
    ("run_ratio", "(a) ratio Northstar / hand-written (median of the pairs)", "x"),
    ("run_northstar_cpu_ms", "(a) Python CPU per iteration, Northstar (median)", "ms"),
    ("run_handwritten_cpu_ms", "(a) the same, hand-written Playwright (median)", "ms"),
    ("run_northstar_tree_cpu_ms", "(a) tree CPU per iteration, Northstar (driver, Chromium)", "ms"),
    ("run_fresh_tree_cpu_ms", "(a) the same, hand-written Playwright", "ms"),
    ("reuse_css_s", "(a) hand-written on one page, css ids (median)", "s"),
    ("reuse_css_ratio", "(a) ratio Northstar / one-page, css (median)", "x"),
    ("reuse_css_ratio_low", "(a)     lowest round", "x"),
    ("reuse_css_ratio_high", "(a)     highest round", "x"),
    ("run_reuse_css_tree_cpu_ms", "(a) one-page, css: tree CPU per iteration", "ms"),
    ("reuse_css_tree_cpu_ratio", "(a) tree CPU, Northstar / one-page, css (median)", "x"),
    ("reuse_css_cpu_ms", "(a) one-page, css: Python CPU per iteration", "ms"),
    ("reuse_semantic_s", "(a) hand-written on one page, semantic (median)", "s"),
    ("reuse_semantic_ratio", "(a) ratio Northstar / one-page, semantic (median)", "x"),
    ("reuse_semantic_ratio_low", "(a)     lowest round", "x"),
    ("reuse_semantic_ratio_high", "(a)     highest round", "x"),
    ("run_reuse_semantic_tree_cpu_ms", "(a) one-page, semantic: tree CPU per iteration", "ms"),
    ("reuse_semantic_tree_cpu_ratio", "(a) tree CPU, Northstar / one-page, semantic (median)", "x"),
    ("reuse_semantic_cpu_ms", "(a) one-page, semantic: Python CPU per iteration", "ms"),
    ("step_overhead_derived_ms", "(b) per step, derived from (a): difference / steps", "ms"),
    ("step_overhead_runner_median_ms", "(b) per step, direct: median ({fake_steps} steps)", "ms"),
    ("step_overhead_runner_p95_ms", "(b) per step, direct: p95 (fake browser, real journal)", "ms"),
    ("step_overhead_whole_run_ms", "(b) per step, whole execute_run on the fake browser", "ms"),
    (
        "cold_start_northstar_s",
        "(c) cold start: command to first step_started (median of {runs})",
        "s",
    ),
    ("cold_start_raw_context_s", "(c) raw Playwright: launch + context, the same point", "s"),
    ("cold_start_raw_page_s", "(c) raw Playwright: ... + page + start URL loaded", "s"),
    ("cold_start_ratio", "(c) ratio Northstar / raw, same point", "x"),
    ("memory_worker_peak_mib", "(d) worker process peak RSS (--repeat {iterations})", "MiB"),
    ("memory_largest_child_mib", "(d) largest driver/Chromium process, peak RSS", "MiB"),
    ("memory_browser_total_mib", "(d) driver + Chromium together, peak PSS (sampled)", "MiB"),
    ("memory_browser_processes", "(d) driver + Chromium processes at that peak", ""),
    ("lanes_1_s", "(e) lanes: {lane_iterations} iterations on 1 lane, whole run (mean)", "s"),
    ("lanes_2_s", "(e) lanes: {lane_iterations} iterations on 2 lanes, whole run (mean)", "s"),
    ("lanes_4_s", "(e) lanes: {lane_iterations} iterations on 4 lanes, whole run (mean)", "s"),
    ("lanes_1_per_s", "(e) lanes: steady throughput on 1 lane", "it/s"),
    ("lanes_2_per_s", "(e) lanes: steady throughput on 2 lanes", "it/s"),
    ("lanes_4_per_s", "(e) lanes: steady throughput on 4 lanes", "it/s"),
    ("lanes_speedup", "(e) lanes: 2 lanes / 1 lane throughput", "x"),
    ("lanes_4_speedup", "(e) lanes: 4 lanes / 1 lane throughput", "x"),
    ("lanes_1_busy_pct", "(e) lanes: machine CPU busy on 1 lane (all cores)", "%"),
    ("lanes_2_busy_pct", "(e) lanes: machine CPU busy on 2 lanes", "%"),
    ("lanes_4_busy_pct", "(e) lanes: machine CPU busy on 4 lanes", "%"),
    ("lanes_cpu_ceiling", "(e) lanes: most any K could gain: 100% / busy on 1 lane", "x"),
    ("journal_us_per_step_median", "journal cost per step, median ({journal_steps} records)", "µs"),
    ("journal_us_per_step_p95", "journal cost per step, p95", "µs"),
    ("cli_northstar_s", "single iteration: `northstar run` process (median of {runs})", "s"),
    ("cli_handwritten_s", "single iteration: hand-written script process (median)", "s"),
    ("cli_ratio", "single iteration: ratio Northstar / hand-written (median)", "x"),
    ("signin_setup_s", "(f) members-note, `setup` signs in once: {iterations} notes", "s"),
    ("signin_login_each_s", "(f) the same work signing in every iteration", "s"),
    ("signin_login_each_ratio", "(f) ratio `setup` / signing in every iteration", "x"),
    ("signin_login_each_ratio_low", "(f)     lowest round", "x"),
    ("signin_login_each_ratio_high", "(f)     highest round", "x"),
    ("signin_setup_tree_cpu_ms", "(f) `setup`: tree CPU per iteration (process + children)", "ms"),
    (
        "signin_login_each_tree_cpu_ms",
        "(f) signing in every iteration: tree CPU per iteration",
        "ms",
    ),
    ("signin_login_each_tree_cpu_ratio", "(f) tree CPU, `setup` / signing in every iteration", "x"),
    ("signin_login_each_tree_cpu_ratio_low", "(f)     lowest round", "x"),
    ("signin_login_each_tree_cpu_ratio_high", "(f)     highest round", "x"),
    ("signin_once_script_s", "(f) hand-written: signs in once, one page", "s"),
    ("signin_once_script_ratio", "(f) ratio `setup` / hand-written signing in once", "x"),
    ("signin_once_script_ratio_low", "(f)     lowest round", "x"),
    ("signin_once_script_ratio_high", "(f)     highest round", "x"),
    (
        "signin_once_script_tree_cpu_ms",
        "(f) hand-written signing in once: tree CPU per iteration",
        "ms",
    ),
    (
        "signin_once_script_tree_cpu_ratio",
        "(f) tree CPU, `setup` / hand-written signing in once",
        "x",
    ),
    ("signin_once_script_tree_cpu_ratio_low", "(f)     lowest round", "x"),
    ("signin_once_script_tree_cpu_ratio_high", "(f)     highest round", "x"),
    ("signin_fresh_script_s", "(f) hand-written: signs in once, a fresh context each", "s"),
    ("signin_fresh_script_ratio", "(f) ratio `setup` / hand-written, same isolation", "x"),
    ("signin_fresh_script_ratio_low", "(f)     lowest round", "x"),
    ("signin_fresh_script_ratio_high", "(f)     highest round", "x"),
    (
        "signin_fresh_script_tree_cpu_ms",
        "(f) hand-written, same isolation: tree CPU per iteration",
        "ms",
    ),
    ("signin_fresh_script_tree_cpu_ratio", "(f) tree CPU, `setup` / same isolation", "x"),
    ("signin_fresh_script_tree_cpu_ratio_low", "(f)     lowest round", "x"),
    ("signin_fresh_script_tree_cpu_ratio_high", "(f)     highest round", "x"),
    ("signin_keep_context_s", "(f) contact form, `--keep-context`: {iterations} iterations", "s"),
    ("signin_one_page_s", "(f) hand-written on one page, css ids, as a process", "s"),
    ("signin_keep_context_ratio", "(f) ratio `--keep-context` / one-page script", "x"),
    ("signin_keep_context_ratio_low", "(f)     lowest round", "x"),
    ("signin_keep_context_ratio_high", "(f)     highest round", "x"),
    ("signin_keep_context_tree_cpu_ms", "(f) `--keep-context`: tree CPU per iteration", "ms"),
    ("signin_one_page_tree_cpu_ms", "(f) one-page script: tree CPU per iteration", "ms"),
    ("signin_keep_context_tree_cpu_ratio", "(f) tree CPU, `--keep-context` / one-page script", "x"),
    ("signin_keep_context_tree_cpu_ratio_low", "(f)     lowest round", "x"),
    ("signin_keep_context_tree_cpu_ratio_high", "(f)     highest round", "x"),
)


@dataclass(frozen=True)
class Figure:
    """One row of the table; ``value`` is ``None`` when it was not measured (see ``note``)."""

    key: str
    name: str
    value: float | None
    unit: str
    note: str = ""


def pair_rows(pairs: Sequence[dict[str, float]]) -> list[Figure]:
    return [
        Figure(
            f"run_pair_{index}_ratio",
            f"    pair {index}: {pair['northstar_s']:.2f} s / {pair['handwritten_s']:.2f} s",
            pair["ratio"],
            "x",
        )
        for index, pair in enumerate(pairs, start=1)
    ]


def _format_value(figure: Figure) -> str:
    if figure.value is None:
        return figure.note
    if figure.unit == "x":
        return f"{figure.value:.2f}x"
    digits = {"s": 2, "ms": 3, "µs": 1, "MiB": 1, "it/s": 2, "%": 0}.get(figure.unit, 0)
    return f"{figure.value:,.{digits}f} {figure.unit}".rstrip()


def render_table(rows: Sequence[Figure]) -> str:
    """The figures as an aligned two-column text table."""
    cells = [("metric", "value")] + [(f.name, _format_value(f)) for f in rows]
    width = max(len(name) for name, _ in cells)
    lines = [f"{name.ljust(width)}  {value}" for name, value in cells]
    lines.insert(1, f"{'-' * width}  {'-' * max(len(value) for _, value in cells)}")
    return "\n".join(lines)
