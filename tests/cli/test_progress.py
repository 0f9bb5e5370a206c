"""The progress display: its line as pure logic, plain lines without a terminal, step events.

The clock is injected (a list of readings), so rates and estimates are exact. One short
run in real Chromium checks that the runner's step hooks reach the live line.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.browser.hooks import HookChain, NoHooks, chain_hooks
from northstar.cli.progress import (
    Progress,
    ProgressHooks,
    RunningStep,
    clock_text,
    progress_line,
    rate_text,
)
from northstar.journal import Journal
from northstar.plan.compiler import prepare
from northstar.recipe.inputs import validate_rows
from northstar.recipe.loader import parse_recipe
from northstar.results import IterationResult, IterationState
from northstar.run.execution import RunRequest, execute_run
from northstar.run.repeat import RepeatOptions
from tests.conftest import make_plan


class Clock:
    """Returns the readings it was given, one per call (the start reading first)."""

    def __init__(self, *readings: float) -> None:
        self.readings = list(readings)

    def __call__(self) -> float:
        return self.readings.pop(0)


def test_the_line_shows_counts_the_step_in_progress_rate_and_estimate() -> None:
    line = progress_line(
        total=20,
        verified=4,
        failed=1,
        running={6: RunningStep(2, 5, "publish")},
        elapsed=10.0,
    )
    assert line == (
        "[5/20] verified 4, not verified 1 | iteration 6 step 2/5 publish"
        " | 30.0/min, elapsed 00:10, left ~00:30"
    )


def test_before_the_first_iteration_ends_there_is_no_rate_and_lanes_are_counted() -> None:
    running = {3: RunningStep(1, 2, "open"), 2: RunningStep(2, 2, "save")}
    line = progress_line(total=4, verified=0, failed=0, running=running, elapsed=3.0)
    assert line == (
        "[0/4] verified 0, not verified 0 | iteration 2 step 2/2 save (+1 running)"
        " | -, elapsed 00:03, left ?"
    )
    assert rate_text(3, 1.5) == "2.0/s"
    assert clock_text(3725) == "1:02:05"


def test_without_a_terminal_it_prints_one_plain_line_per_iteration() -> None:
    stream = io.StringIO()
    progress = Progress(3, stream, live=False, monotonic=Clock(0.0, 2.0, 5.0))
    progress.step_started(1, RunningStep(1, 3, "title"))  # no line for a step in plain mode
    progress.update(IterationResult(1, IterationState.VERIFIED, duration_ms=1500.0))
    failed = IterationResult(
        2, IterationState.FAILED, duration_ms=2500.0, reason_code="EXPECTATION_FAILED"
    )
    progress.update(failed)
    progress.close()
    assert stream.getvalue() == (
        "iteration 1/3: verified in 1.50 s | 30.0/min, left ~00:04\n"
        "iteration 2/3: failed (EXPECTATION_FAILED) in 2.50 s | 24.0/min, left ~00:02\n"
    )
    assert "\r" not in stream.getvalue()


def test_in_a_terminal_each_step_rewrites_one_line_clipped_to_the_width() -> None:
    stream = io.StringIO()
    progress = Progress(2, stream, live=True, monotonic=Clock(0.0, 1.0, 2.0), width=60)
    progress.step_started(1, RunningStep(1, 2, "title"))
    progress.update(IterationResult(1, IterationState.VERIFIED, duration_ms=900.0))
    progress.close()
    first, second = stream.getvalue().removesuffix("\n").split("\r\x1b[2K")[1:]
    assert first == "[0/2] verified 0, not verified 0 | iteration 1 step 1/2 title | -, elap"[:59]
    assert second == "[1/2] verified 1, not verified 0 | 30.0/min, elapsed 00:02, left ~00:02"[:59]
    assert len(first) == len(second) == 59  # one column short of the terminal
    assert stream.getvalue().endswith("\n")


ONE_STEP = """
name: two-steps
tabs:
  site: {start: "{{ base_url }}/posts/new"}
steps:
  - {id: heading, tab: site, verify_outcome: {visible: {role: heading, name: New post}}}
  - {id: button, tab: site, verify_outcome: {visible: {role: button, name: Publish}}}
"""


async def test_hooks_name_each_step_from_the_plan() -> None:
    stream = io.StringIO()
    progress = Progress(1, stream, live=True, monotonic=Clock(0.0, 0.5), width=200)
    plan = make_plan(ONE_STEP.replace("{{ base_url }}", "http://127.0.0.1:1"), iteration=1)
    await ProgressHooks(progress).before_step(None, plan, plan.steps[1])
    assert progress.running == {1: RunningStep(2, 2, "button")}
    assert "iteration 1 step 2/2 button" in stream.getvalue()


@pytest.mark.browser
async def test_a_run_feeds_its_step_events_to_the_live_line(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    path = tmp_path / "two-steps.yaml"
    path.write_text(ONE_STEP)
    compiled = prepare(parse_recipe(ONE_STEP, source=str(path)), source=str(path))
    typed = validate_rows(compiled.recipe.params, [{}, {}], {})
    request = RunRequest(path, compiled, typed, RepeatOptions.of(2), base_url=site.base_url)
    stream = io.StringIO()
    progress = Progress(2, stream, live=True, width=200)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(
            request,
            host=host,
            journal=journal,
            on_result=progress.update,
            hooks=ProgressHooks(progress),
        )
    assert outcome.status == "verified"
    shown = stream.getvalue()
    for text in (
        "iteration 1 step 1/2 heading",
        "iteration 1 step 2/2 button",
        "iteration 2 step 1/2 heading",
        "iteration 2 step 2/2 button",
        "[2/2] verified 2, not verified 0",
    ):
        assert text in shown, shown
    assert progress.running == {}


def test_chain_hooks_keeps_one_hook_as_it_is_and_orders_several() -> None:
    first, second = NoHooks(), ProgressHooks(Progress(1, io.StringIO(), live=False))
    assert chain_hooks(None, None) is None
    assert chain_hooks(None, second) is second
    chained = chain_hooks(first, second)
    assert isinstance(chained, HookChain)
    assert chained.hooks == (first, second)  # the host's first, the caller's after
