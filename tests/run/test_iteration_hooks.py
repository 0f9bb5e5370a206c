"""The runner calls its iteration hooks at the right points; debugging decisions are plain."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from northstar.browser import BrowserSession
from northstar.browser.hooks import HookChain, NoHooks, hooks_for
from northstar.browser.settings import (
    DebugSettings,
    PausePoint,
    pause_tab,
    trace_file_name,
    trace_kept,
)
from northstar.plan.model import BoundStep, Plan
from northstar.results import IterationState, StepResult
from northstar.run.runner import ProgramRunner
from tests.conftest import make_plan
from tests.run.test_runner_decisions import FakeHost, Script

RECIPE = """
name: hooks
tabs:
  site: {start: "http://127.0.0.1:1/"}
steps:
  - id: one
    tab: site
    click: {target: {role: button, name: One}}
  - id: two
    tab: site
    click: {target: {role: button, name: Two}}
  - id: three
    tab: site
    verify_outcome: {visible: {text: Done}}
"""


class Recording(NoHooks):
    """Writes what it was told into a shared list, tagged with its name."""

    def __init__(self, name: str, calls: list[str]) -> None:
        self.name = name
        self.calls = calls

    @asynccontextmanager
    async def around(self, session: BrowserSession, plan: Plan) -> AsyncIterator[None]:
        self.calls.append(f"{self.name}:enter")
        try:
            yield
        except BaseException:
            self.calls.append(f"{self.name}:exit-failed")
            raise
        self.calls.append(f"{self.name}:exit")

    async def before_step(self, session: BrowserSession, plan: Plan, step: BoundStep) -> None:
        assert session.has_tab(step.tab), "a step's tab is open before its pause"
        self.calls.append(f"{self.name}:before:{step.id}")

    async def after_step(
        self, session: BrowserSession, plan: Plan, step: BoundStep, result: StepResult
    ) -> None:
        self.calls.append(f"{self.name}:after:{step.id}")

    async def at_failure(self, session: BrowserSession, plan: Plan, failed: StepResult) -> None:
        self.calls.append(f"{self.name}:failure:{failed.step_id}")


async def run_with(hooks: object, script: Script | None = None) -> tuple[IterationState, Script]:
    script = script or Script()
    runner = ProgramRunner(FakeHost(script), hooks=hooks)  # type: ignore[arg-type]
    result = await runner.run_iteration(make_plan(RECIPE))
    return result.state, script


async def test_hooks_see_every_step_in_order() -> None:
    calls: list[str] = []
    state, _ = await run_with(Recording("a", calls))
    assert state is IterationState.VERIFIED
    assert calls == [
        "a:enter",
        "a:before:one",
        "a:after:one",
        "a:before:two",
        "a:after:two",
        "a:before:three",
        "a:after:three",
        "a:exit",
    ]


async def test_a_failure_reaches_the_hook_and_leaves_around_with_an_error() -> None:
    calls: list[str] = []
    script = Script(failing_checks={'visible text "Done"'})
    state, _ = await run_with(Recording("a", calls), script)
    assert state is IterationState.FAILED
    assert calls[-3:] == ["a:before:three", "a:failure:three", "a:exit-failed"]


async def test_a_chain_nests_around_and_calls_in_order() -> None:
    calls: list[str] = []
    await run_with(HookChain([Recording("outer", calls), Recording("inner", calls)]))
    assert calls[:2] == ["outer:enter", "inner:enter"]
    assert calls[2:4] == ["outer:before:one", "inner:before:one"]
    assert calls[-2:] == ["inner:exit", "outer:exit"]


def test_hooks_come_from_a_host_that_provides_them(tmp_path: Path) -> None:
    class Provider:
        def iteration_hooks(self, artifacts: Path) -> NoHooks:
            assert artifacts == tmp_path
            return NoHooks()

    assert isinstance(hooks_for(Provider(), tmp_path), NoHooks)
    assert hooks_for(object(), tmp_path) is None


@pytest.mark.parametrize(
    ("mode", "failed", "kept"),
    [
        ("off", True, False),
        ("on", False, True),
        ("on", True, True),
        ("retain-on-failure", False, False),
        ("retain-on-failure", True, True),
    ],
)
def test_which_traces_are_kept(mode: str, failed: bool, kept: bool) -> None:
    assert trace_kept(mode, failed=failed) is kept  # type: ignore[arg-type]


def test_debugging_decisions() -> None:
    assert trace_file_name(3) == "iteration-0003-trace.zip"
    assert pause_tab("admin", ["site", "admin"]) == "admin"
    assert pause_tab("", ["site", "admin"]) == "site"
    assert pause_tab("admin", []) is None
    assert DebugSettings(step=True).pauses
    assert not DebugSettings(trace="on").pauses
    assert not DebugSettings().active
    assert DebugSettings(trace="on").active
    point = PausePoint("failure", 2, "send", "site", "TARGET_MISSING: no button")
    assert point.describe() == (
        "paused at the failure of iteration 2, step 'send' (tab 'site'): TARGET_MISSING: no button"
    )
