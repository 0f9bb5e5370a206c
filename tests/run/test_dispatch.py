"""The host's one dispatch routine: the order every front end's step goes through.

Decision logic only: a recorder and a browser half that write what they were asked into
one list, so the order (started, in flight, acted, dispatched, expectations, finished) and
the outcome of each failure can be read without a browser.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from northstar.errors import (
    ExpectationFailed,
    IdempotencyConflict,
    OutcomeUnknown,
    TargetMissing,
)
from northstar.plan.model import BoundStep, Plan
from northstar.recipe.model import Check
from northstar.results import Evidence, StepResult, StepStatus
from northstar.run.dispatch import NOT_RESENT, StepDispatch, acted_on
from tests.conftest import make_plan

RECIPE = """
name: dispatch-order
tabs:
  site: {start: "http://127.0.0.1:9/form"}
steps:
  - id: title
    tab: site
    fill: {target: {label: Title}, value: Hello}
  - id: send
    tab: site
    click: {target: {role: button, name: Send}}
    effect: submit
    expect:
      - url: "**/thanks"
      - visible: {text: Thanks}
"""


class Log:
    """The recorder, the browser and the failpoints, writing into one list."""

    def __init__(self, *, verified: bool = False, refusal: Exception | None = None) -> None:
        self.calls: list[str] = []
        self.finished: list[StepResult] = []
        self._verified, self._refusal = verified, refusal

    def step_started(self, plan: Plan, step: BoundStep) -> None:
        self.calls.append(f"started {step.id}")

    def submit_in_flight(self, plan: Plan, step: BoundStep) -> bool:
        if self._refusal is not None:
            raise self._refusal
        self.calls.append(f"in_flight {step.id}")
        return not self._verified

    def submit_dispatched(self, plan: Plan, step: BoundStep) -> None:
        self.calls.append(f"dispatched {step.id}")

    def step_finished(self, plan: Plan, result: StepResult) -> None:
        self.calls.append(f"finished {result.step_id} {result.status.value}")
        self.finished.append(result)

    def failpoint(self, name: str, iteration: int) -> None:
        self.calls.append(f"failpoint {name}")

    def perform(
        self, fails_before: Exception | None = None, fails_after: Exception | None = None
    ) -> Callable[[Callable[[], None]], object]:
        async def perform(before_dispatch: Callable[[], None]) -> tuple[Evidence, ...]:
            if fails_before is not None:
                raise fails_before
            before_dispatch()
            self.calls.append("browser acts")
            if fails_after is not None:
                raise fails_after
            return (Evidence("acted_on", "site", "button Send", True, 'button "Send"'),)

        return perform

    def check(self, failing: str | None = None) -> Callable[[Check], object]:
        async def check(expected: Check) -> Evidence:
            self.calls.append(f"expect {expected.describe()}")
            if failing is not None and failing in expected.describe():
                raise ExpectationFailed(f"{expected.describe()}: not there")
            return Evidence("check", "site", expected.describe(), True)

        return check


class Feed:
    def __init__(self) -> None:
        self.seen: list[tuple[str, bool, bool]] = []

    async def acted(self, step: BoundStep, *, executed: bool, passed: bool) -> None:
        self.seen.append((step.id, executed, passed))


def dispatch_of(log: Log, step_id: str = "send", feed: Feed | None = None) -> StepDispatch:
    plan = make_plan(RECIPE)
    return StepDispatch(log, plan, plan.step(step_id), failpoint=log.failpoint, feed=feed)


async def test_a_submission_is_in_flight_before_the_browser_acts_and_checked_after() -> None:
    log, feed = Log(), Feed()
    dispatch = dispatch_of(log, feed=feed)
    dispatch.start()
    evidence = await dispatch.act(log.perform(), log.check())  # type: ignore[arg-type]
    result = await dispatch.passed(evidence)
    assert log.calls == [
        "started send",
        "failpoint before_in_flight",
        "in_flight send",
        "failpoint after_in_flight",
        "browser acts",
        "dispatched send",
        "failpoint after_dispatch",
        "expect url '**/thanks'",
        'expect visible text "Thanks"',
        "finished send passed",
    ]
    assert result.status is StepStatus.PASSED
    assert len(result.evidence) == 3
    assert acted_on(evidence) == 'button "Send"'
    assert dispatch.dispatched
    assert dispatch.acted
    assert not dispatch.recorded
    assert feed.seen == [("send", True, True)]


async def test_a_submission_already_verified_is_answered_from_the_record() -> None:
    log = Log(verified=True)
    dispatch = dispatch_of(log)
    dispatch.start()
    evidence = await dispatch.act(log.perform(), log.check())  # type: ignore[arg-type]
    assert "browser acts" not in log.calls
    assert not any(call.startswith(("dispatched", "expect")) for call in log.calls)
    assert dispatch.recorded
    assert not dispatch.dispatched
    assert [item.found for item in evidence] == [NOT_RESENT]


async def test_a_check_that_fails_after_dispatch_leaves_the_outcome_unknown() -> None:
    log, feed = Log(), Feed()
    dispatch = dispatch_of(log, feed=feed)
    dispatch.start()
    with pytest.raises(ExpectationFailed) as failed:
        await dispatch.act(log.perform(), log.check(failing="Thanks"))  # type: ignore[arg-type]
    failure = await dispatch.failed(failed.value)
    assert failure.unknown
    assert isinstance(failure.error, OutcomeUnknown)
    assert "EXPECTATION_FAILED" in failure.error.message
    assert failure.result.error is not None
    assert failure.result.error["code"] == "EXPECTATION_FAILED"  # the step keeps its cause
    assert dispatch.failed_check is not None
    assert dispatch.failed_check.describe() == 'visible text "Thanks"'
    assert log.calls[-1] == "finished send failed"
    assert feed.seen == [("send", True, False)]


async def test_a_failure_before_the_in_flight_record_sent_nothing() -> None:
    log = Log()
    dispatch = dispatch_of(log)
    dispatch.start()
    missing = TargetMissing("button Send: no such element")
    with pytest.raises(TargetMissing):
        await dispatch.act(log.perform(fails_before=missing), log.check())  # type: ignore[arg-type]
    failure = await dispatch.failed(missing)
    assert not failure.unknown
    assert failure.error is missing
    assert not any(call.startswith(("in_flight", "failpoint")) for call in log.calls)


async def test_a_refused_submission_dispatches_nothing_and_is_not_unknown() -> None:
    log = Log(refusal=IdempotencyConflict("other inputs"))
    dispatch = dispatch_of(log)
    dispatch.start()
    with pytest.raises(IdempotencyConflict) as refused:
        await dispatch.act(log.perform(), log.check())  # type: ignore[arg-type]
    failure = await dispatch.failed(refused.value)
    assert "browser acts" not in log.calls
    assert not failure.unknown
    assert not dispatch.dispatched


async def test_an_unforeseen_error_is_itself_until_something_may_have_been_sent() -> None:
    log = Log()
    plain = dispatch_of(log, "title")
    plain.start()
    with pytest.raises(KeyError):
        await plain.failed(KeyError("bug"))  # nothing was sent: the bug shows as itself
    after_earlier = await plain.failed(KeyError("bug"), earlier_dispatch=True)
    assert after_earlier.unknown
    assert isinstance(after_earlier.error, OutcomeUnknown)
    assert "KeyError" in after_earlier.error.message
    assert "bug" not in after_earlier.error.message
    sent = dispatch_of(log)
    sent.start()
    with pytest.raises(RuntimeError):
        await sent.act(log.perform(fails_after=RuntimeError("x")), log.check())  # type: ignore[arg-type]
    failure = await sent.failed(RuntimeError("x"))
    assert failure.unknown
    assert isinstance(failure.error, OutcomeUnknown)


async def test_an_action_that_is_no_submission_writes_no_in_flight_record() -> None:
    log = Log()
    dispatch = dispatch_of(log, "title")
    dispatch.start()
    await dispatch.passed(await dispatch.act(log.perform(), log.check()))  # type: ignore[arg-type]
    assert log.calls == ["started title", "browser acts", "finished title passed"]
    assert dispatch.acted
    assert not dispatch.dispatched
