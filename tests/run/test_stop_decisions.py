"""A stop request's decisions, without a browser: pauses, back-offs, signals, the driver's loop.

The runner's waits inside a step (a pause for a person, a retry's back-off) must end at a
stop request; the step they belonged to is journaled and the iteration is ``stopped``.
Signals are sent to this process itself (``os.kill``): a stop request, never a
``KeyboardInterrupt``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Iterator

import pytest

from browser_adapters.early_driver import driver_loop
from northstar._stop_requests import (
    catch_stop_signals,
    catch_stop_signals_for,
    on_stop_request,
    stop_requested,
)
from northstar.browser import BrowserSession
from northstar.browser.hooks import NoHooks
from northstar.cli.run_commands import run_with_signals
from northstar.errors import NavigationFailed
from northstar.plan.model import BoundStep, Plan
from northstar.results import IterationResult, IterationState, StepResult, StepStatus
from northstar.run.execution import RunOutcome, StopSignal
from northstar.run.repeat import RepeatSummary
from northstar.run.runner import ProgramRunner
from tests.conftest import make_plan
from tests.run.test_runner_decisions import READS, RECIPE, SAVE_URL, FakeHost, Recorder, Script

BOUND_S = 10  # a test that hangs fails here instead


@pytest.fixture(autouse=True)
def python_default_sigint() -> Iterator[None]:
    """Each test starts from Python's own SIGINT handler and leaves the one it found.

    A suite started as a background job of a non-interactive shell inherits SIGINT ignored,
    which is not what a terminal gives ``northstar run``.
    """
    found = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, found)


class PersonAway(NoHooks):
    """A pause (``--step`` before ``at``, or at a failure) whose person never comes back."""

    def __init__(self, *, at: str | None = None, at_failure: bool = False) -> None:
        self.at = at
        self.pause_at_failure = at_failure
        self.paused = asyncio.Event()
        self.cancelled = False

    async def before_step(self, session: BrowserSession, plan: Plan, step: BoundStep) -> None:
        if step.id == self.at:
            await self._wait()

    async def at_failure(self, session: BrowserSession, plan: Plan, failed: StepResult) -> None:
        if self.pause_at_failure:
            await self._wait()

    async def _wait(self) -> None:
        self.paused.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def run_until_paused(
    hooks: PersonAway, script: Script, stop: StopSignal
) -> tuple[IterationResult, Recorder]:
    """Run an iteration, request a stop once it is paused, return what it ended with."""
    recorder = Recorder(script.events)
    runner = ProgramRunner(
        FakeHost(script),
        recorder=recorder,
        hooks=hooks,
        should_stop=lambda: stop.requested,
        wait_for_stop=stop.until_requested,
    )
    async with asyncio.timeout(BOUND_S):
        iteration = asyncio.ensure_future(runner.run_iteration(make_plan(RECIPE)))
        await hooks.paused.wait()
        stop.request()  # Ctrl-C while the person is away
        return await iteration, recorder


def actions(script: Script) -> list[str]:
    return [e.removeprefix("action:") for e in script.events if e.startswith("action:")]


async def test_a_stop_ends_the_pause_before_a_step_and_the_step_never_acts() -> None:
    script = Script(reads=dict(READS))
    hooks = PersonAway(at="save")  # the submission: it must not be sent after Ctrl-C
    result, recorder = await run_until_paused(hooks, script, StopSignal())
    assert hooks.cancelled
    assert result.state is IterationState.STOPPED
    assert [(s.step_id, s.status) for s in result.steps] == [
        ("open", StepStatus.PASSED),
        ("title", StepStatus.PASSED),
        ("save", StepStatus.SKIPPED),
    ]
    assert actions(script) == ["open", "title"]
    assert "submit_in_flight:save" not in script.events
    assert recorder.events[-2:] == ["step_finished:save:skipped", "session:close"]


async def test_a_stop_ends_the_pause_at_a_failure_and_the_failure_stands() -> None:
    script = Script(reads=dict(READS), failing_checks={SAVE_URL})
    hooks = PersonAway(at_failure=True)
    result, _ = await run_until_paused(hooks, script, StopSignal())
    assert hooks.cancelled
    assert result.state is IterationState.UNKNOWN  # the submission was sent, then not verified
    assert result.reason_code == "OUTCOME_UNKNOWN"


async def test_without_a_stop_the_pause_is_waited_for() -> None:
    script = Script(reads=dict(READS))
    hooks = PersonAway(at="title")
    runner = ProgramRunner(
        FakeHost(script), hooks=hooks, wait_for_stop=StopSignal().until_requested
    )
    iteration = asyncio.ensure_future(runner.run_iteration(make_plan(RECIPE)))
    await hooks.paused.wait()
    done, _ = await asyncio.wait({iteration}, timeout=0.2)
    assert not done  # still paused: nothing but a stop or the person ends it
    iteration.cancel()
    with pytest.raises(asyncio.CancelledError):
        await iteration


async def test_a_stop_during_a_retry_back_off_gives_the_retry_up() -> None:
    stop = StopSignal()

    async def back_off(seconds: float) -> None:
        stop.request()  # Ctrl-C arrives as the back-off begins
        await stop.wait(seconds)

    script = Script(reads=dict(READS), flaky={"open": [NavigationFailed("503", status=503)]})
    recorder = Recorder(script.events)
    runner = ProgramRunner(
        FakeHost(script), recorder=recorder, sleep=back_off, should_stop=lambda: stop.requested
    )
    async with asyncio.timeout(BOUND_S):
        result = await runner.run_iteration(make_plan(RECIPE))
    assert result.state is IterationState.STOPPED
    [opened] = result.steps
    assert (opened.step_id, opened.status, opened.attempts) == ("open", StepStatus.FAILED, 1)
    assert opened.error is not None
    assert opened.error["code"] == "NAVIGATION_FAILED"
    assert "step_finished:open:failed" in recorder.events
    assert actions(script) == []


async def test_the_stop_signal_ends_a_long_wait_at_once() -> None:
    stop = StopSignal()
    asyncio.get_running_loop().call_soon(stop.request)
    async with asyncio.timeout(BOUND_S):
        await stop.wait(3600)  # an --interval of an hour
    assert stop.requested


def test_sigint_and_sigterm_become_stop_requests_not_keyboard_interrupts() -> None:
    heard: list[str] = []
    with catch_stop_signals():
        assert not stop_requested()
        os.kill(os.getpid(), signal.SIGINT)  # before anyone listens: kept for later
        assert stop_requested()
        with on_stop_request(lambda: heard.append("told")):
            assert heard == ["told"]  # the early request is delivered at once
            os.kill(os.getpid(), signal.SIGTERM)
            assert heard == ["told", "told"]
        with catch_stop_signals():  # nested: no change
            assert stop_requested()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


@pytest.mark.parametrize(
    ("args", "catches"),
    [(["run", "r.yaml"], True), (["-v", "resume", "r-1"], True), (["show", "r-1"], False)],
)
def test_only_commands_that_run_iterations_catch_stop_signals(
    args: list[str], catches: bool
) -> None:
    with catch_stop_signals_for(args):
        handler = signal.getsignal(signal.SIGINT)
    assert (handler is not signal.default_int_handler) is catches


def test_a_signal_reaches_the_runs_stop_signal_on_its_loop() -> None:
    async def start(stop: StopSignal, on_result: object) -> RunOutcome:
        os.kill(os.getpid(), signal.SIGINT)
        async with asyncio.timeout(BOUND_S):
            await stop.until_requested()
        return RunOutcome("r-1", "c", "stopped", RepeatSummary(requested=1), [])

    async def run() -> RunOutcome:
        return await run_with_signals(start, total=1, as_json=True)

    assert asyncio.run(run()).status == "stopped"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_driver_loop_starts_children_in_a_session_of_their_own() -> None:
    """Out of the terminal's process group: a Ctrl-C does not reach them."""

    async def child_session() -> tuple[int, int]:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "import os; print(os.getsid(0))",
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await child.communicate()
        return child.pid, int(out)

    loop = driver_loop()
    try:
        pid, session = loop.run_until_complete(child_session())
    finally:
        loop.close()
    assert session == pid != os.getsid(0)
