"""The repeat loop's rules, with fake iterations and an injected clock (no browser, no sleeps)."""

from __future__ import annotations

import pytest

from northstar.errors import ProgramIterationNotVerified, RepeatOptionsInvalid
from northstar.results import Evidence, IterationResult, IterationState, StepResult, StepStatus
from northstar.run.repeat import RepeatOptions, repeat_program


class FakeClock:
    """Records every wait and advances virtual time instead of sleeping."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def verified(number: int, *, model_calls: int | None = 0) -> IterationResult:
    step = StepResult(
        "save",
        "admin",
        "click",
        StepStatus.PASSED,
        1.0,
        (Evidence("url", "admin", "url '**/done'", True),),
    )
    return IterationResult(
        number, IterationState.VERIFIED, (step,), {"id": str(number)}, model_calls=model_calls
    )


def failed(number: int) -> IterationResult:
    return IterationResult(
        number, IterationState.FAILED, reason_code="EXPECTATION_FAILED", failing_step="save"
    )


class Script:
    """An iteration function that follows a script and logs what happened when."""

    def __init__(self, clock: FakeClock, outcomes: dict[int, IterationResult] | None = None):
        self.clock = clock
        self.outcomes = outcomes or {}
        self.calls: list[tuple[int, float]] = []

    async def __call__(self, number: int) -> IterationResult:
        self.calls.append((number, self.clock.now))
        return self.outcomes.get(number, verified(number))


async def test_interval_is_waited_between_iterations_only() -> None:
    clock = FakeClock()
    script = Script(clock)
    summary = await repeat_program(script, RepeatOptions.of(3, 10), sleep=clock.sleep)
    assert clock.waits == [10, 10]  # never before the first, never after the last
    assert script.calls == [(1, 0.0), (2, 10.0), (3, 20.0)]
    assert len(summary.verified) == 3


async def test_zero_interval_never_waits() -> None:
    clock = FakeClock()
    await repeat_program(Script(clock), RepeatOptions.of(4, 0), sleep=clock.sleep)
    assert clock.waits == []


async def test_unverified_iteration_stops_the_loop() -> None:
    clock = FakeClock()
    script = Script(clock, {3: failed(3)})
    with pytest.raises(ProgramIterationNotVerified) as caught:
        await repeat_program(script, RepeatOptions.of(5, 1), sleep=clock.sleep)
    error = caught.value
    assert error.code == "PROGRAM_ITERATION_NOT_VERIFIED"
    assert [n for n, _ in script.calls] == [1, 2, 3]  # 4 and 5 never called
    assert error.result.iteration == 3
    assert [r.iteration for r in error.verified.verified] == [1, 2]
    assert clock.waits == [1, 1]  # no wait after the failing iteration


async def test_verified_iterations_contribute_tagged_steps_outputs_and_evidence() -> None:
    clock = FakeClock()
    summary = await repeat_program(Script(clock), RepeatOptions.of(3), sleep=clock.sleep)
    assert [(n, s.step_id) for n, s in summary.steps] == [(1, "save"), (2, "save"), (3, "save")]
    assert summary.outputs == ((1, "id", "1"), (2, "id", "2"), (3, "id", "3"))
    assert summary.evidence_count == 3


async def test_model_calls_summed_where_reported() -> None:
    clock = FakeClock()
    outcomes = {n: verified(n, model_calls=n) for n in (1, 2, 3)}
    summary = await repeat_program(Script(clock, outcomes), RepeatOptions.of(3), sleep=clock.sleep)
    assert summary.model_calls == 6


async def test_missing_model_call_count_makes_the_total_unknown_not_zero() -> None:
    clock = FakeClock()
    outcomes = {1: verified(1, model_calls=2), 2: verified(2, model_calls=None)}
    summary = await repeat_program(Script(clock, outcomes), RepeatOptions.of(2), sleep=clock.sleep)
    assert summary.model_calls is None


async def test_stop_request_starts_nothing_more() -> None:
    clock = FakeClock()
    script = Script(clock)
    summary = await repeat_program(
        script,
        RepeatOptions.of(5, 2),
        sleep=clock.sleep,
        should_stop=lambda: len(script.calls) >= 2,
    )
    assert [n for n, _ in script.calls] == [1, 2]
    assert not summary.all_verified


@pytest.mark.parametrize(
    ("count", "interval", "bound"),
    [
        (0, 0, "from 1 to 100000"),
        (100_001, 0, "from 1 to 100000"),
        (-3, 0, "from 1 to 100000"),
        (2.0, 0, "from 1 to 100000"),
        ("5", 0, "from 1 to 100000"),
        (True, 0, "from 1 to 100000"),
        (1, -1, "from 0 to 86400"),
        (1, 86_401, "from 0 to 86400"),
        (1, 0.5, "from 0 to 86400"),
        (1, "10", "from 0 to 86400"),
    ],
)
def test_bad_repeat_options_name_the_bound(count: object, interval: object, bound: str) -> None:
    with pytest.raises(RepeatOptionsInvalid) as caught:
        RepeatOptions.of(count, interval)
    assert bound in caught.value.message
    assert caught.value.code == "REPEAT_OPTIONS_INVALID"


def test_bounds_themselves_are_accepted() -> None:
    assert RepeatOptions.of(1, 0).count == 1
    assert RepeatOptions.of(100_000, 86_400).interval_s == 86_400
