"""ProgramRunner's decisions against an in-memory fake of the browser protocol.

The fake implements ``northstar.browser.BrowserHost``/``BrowserSession`` with scripted
failures, so the verdicts (verified, failed, unknown) and the order of the recorder's
calls can be checked without a browser.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

import pytest

from northstar import readers
from northstar.browser import BrowserHost, BrowserSession, Reading, SendTrace
from northstar.cli._inputs import build_request
from northstar.errors import (
    ExpectationFailed,
    NavigationFailed,
    NorthstarError,
    TargetMissing,
)
from northstar.journal import Journal
from northstar.monitor.observation import Observation
from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, Target
from northstar.results import Evidence, IterationResult, IterationState, StepResult, StepStatus
from northstar.run.execution import execute_run
from northstar.run.runner import ProgramRunner, apply_regex
from tests.conftest import make_plan

# --- the fake -------------------------------------------------------------------------------


@dataclass
class Script:
    """What the fake browser does: which calls fail, and what pages read as."""

    before_dispatch: dict[str, Exception] = field(default_factory=dict)
    after_dispatch: dict[str, Exception] = field(default_factory=dict)
    failing_checks: set[str] = field(default_factory=set)
    crashing_checks: dict[str, Exception] = field(default_factory=dict)
    crashing_reads: dict[tuple[str, str], Exception] = field(default_factory=dict)
    flaky: dict[str, list[NorthstarError]] = field(default_factory=dict)
    reads: dict[tuple[str, str], str] = field(default_factory=dict)
    session_error: NorthstarError | None = None
    events: list[str] = field(default_factory=list)
    sent: SendTrace = field(default_factory=lambda: SendTrace(1, navigated=True))  # left the page


class FakeSession:
    """An in-memory ``BrowserSession``: tab roles are names in a set."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.tabs: set[str] = set()

    def has_tab(self, role: str) -> bool:
        return role in self.tabs

    async def open_tab(self, tab: BoundTab, *, timeout_ms: int) -> Evidence:
        self.script.events.append(f"open:{tab.role}")
        self.tabs.add(tab.role)
        return Evidence("open", tab.role, tab.start or "", True, tab.start or "")

    async def perform(
        self, step: BoundStep, *, before_dispatch: Callable[[], None] = lambda: None
    ) -> tuple[Evidence, ...]:
        self.script.events.append(f"resolve:{step.id}")
        flaky = self.script.flaky.get(step.id)
        if flaky:
            raise flaky.pop(0)
        if step.id in self.script.before_dispatch:
            raise self.script.before_dispatch[step.id]
        before_dispatch()
        self.script.events.append(f"action:{step.id}")
        if step.opens_tab is not None:
            self.tabs.add(step.opens_tab)
        if step.id in self.script.after_dispatch:
            raise self.script.after_dispatch[step.id]
        return (Evidence(step.kind, step.tab, step.id, True),)

    async def send_trace(self, tab: str) -> SendTrace:
        return self.script.sent

    async def check(self, check: Check, *, tab: str, timeout_ms: int) -> Evidence:
        expected = check.describe()
        self.script.events.append(f"check:{tab}:{expected}")
        if expected in self.script.failing_checks:
            raise ExpectationFailed(f"{expected} did not hold", tab=tab)
        if expected in self.script.crashing_checks:
            raise self.script.crashing_checks[expected]
        return Evidence(check.kind, tab, expected, True)

    async def read(self, reading: Reading, *, timeout_ms: int) -> str:
        self.script.events.append(f"read:{reading.tab}:{reading.source}")
        if (reading.tab, reading.source) in self.script.crashing_reads:
            raise self.script.crashing_reads[(reading.tab, reading.source)]
        return self.script.reads.get((reading.tab, reading.source), "")

    async def observe(self, tab: str) -> Observation:
        self.script.events.append(f"observe:{tab}")
        return Observation(tab=tab, url=f"fake://{tab}", snapshot_id=str(len(self.script.events)))

    async def submits_to(self, tab: str, target: Target, *, timeout_ms: int) -> str | None:
        return None

    async def screenshot(self, tab: str) -> bytes | None:
        return b"png:" + tab.encode() if tab in self.tabs else None

    def redacted(self, text: str) -> str:
        return text


class FakeHost:
    """An in-memory ``BrowserHost`` handing out one ``FakeSession`` per iteration."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.sessions: list[FakeSession] = []

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    def session(self, plan: Plan) -> AbstractAsyncContextManager[BrowserSession]:
        return self._session()

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[BrowserSession]:
        if self.script.session_error is not None:
            raise self.script.session_error
        session = FakeSession(self.script)
        self.sessions.append(session)
        self.script.events.append("session:open")
        try:
            yield session
        finally:
            self.script.events.append("session:close")


class Recorder:
    """An ``IterationRecorder`` that writes into the same event list as the fake."""

    def __init__(self, events: list[str], already_verified: frozenset[str] = frozenset()) -> None:
        self.events = events
        self.already_verified = already_verified
        self.finished: list[StepResult] = []

    def step_started(self, plan: Plan, step: BoundStep) -> None:
        self.events.append(f"step_started:{step.id}")

    def submit_in_flight(self, plan: Plan, step: BoundStep) -> bool:
        self.events.append(f"submit_in_flight:{step.id}")
        return step.id not in self.already_verified

    def submit_dispatched(self, plan: Plan, step: BoundStep) -> None:
        self.events.append(f"submit_dispatched:{step.id}")

    def step_finished(self, plan: Plan, result: StepResult) -> None:
        self.finished.append(result)
        self.events.append(f"step_finished:{result.step_id}:{result.status}")


async def no_sleep(seconds: float) -> None:
    return None


def test_the_fakes_implement_the_protocol() -> None:
    # Checked by mypy: the fakes satisfy the protocols the runner depends on.
    script = Script()
    host: BrowserHost = FakeHost(script)
    session: BrowserSession = FakeSession(script)
    assert callable(host.session)
    assert not session.has_tab("any")


# --- the plan -------------------------------------------------------------------------------

RECIPE = """\
name: post
params:
  title: {type: string, default: Hello}
tabs:
  admin: {start: "http://127.0.0.1:9/admin/"}
  preview: {opened_by: view}
steps:
  - {id: open, tab: admin, goto: posts/add/}
  - {id: title, tab: admin, fill: {target: {label: Title}, value: "{{ title }}"}}
  - id: save
    tab: admin
    click: {target: {role: button, name: Save}}
    effect: submit
    expect:
      - url: "**/posts/"
      - visible: {text: "was added"}
  - {id: view, tab: admin, click: {target: {role: link, name: View}}}
  - {id: seen, tab: preview, verify_outcome: {visible: {role: heading, name: "{{ title }}"}}}
  - {id: grab, tab: preview, extract: {as: heading, from: title}}
outputs:
  post_id: {tab: admin, from: url, regex: "posts/(\\\\d+)/"}
done_when:
  - {tab: admin, visible: {role: link, name: "{{ title }}"}}
"""

READS = {("admin", "url"): "http://127.0.0.1:9/admin/posts/42/", ("preview", "title"): "Hello!"}
SAVE_URL = "url '**/posts/'"
SAVE_TEXT = 'visible text "was added"'
DONE = 'visible link "Hello"'


@pytest.fixture
def plan() -> Plan:
    return make_plan(RECIPE)


async def run_async(
    plan: Plan, script: Script, *, already_verified: frozenset[str] = frozenset(), **kwargs: object
) -> tuple[IterationResult, Recorder]:
    recorder = Recorder(script.events, already_verified)
    runner = ProgramRunner(FakeHost(script), recorder=recorder, sleep=no_sleep, **kwargs)  # type: ignore[arg-type]
    return await runner.run_iteration(plan), recorder


def actions(script: Script) -> list[str]:
    return [e.removeprefix("action:") for e in script.events if e.startswith("action:")]


# --- verdicts -------------------------------------------------------------------------------


async def test_a_passing_plan_is_verified_with_outputs_and_evidence(plan: Plan) -> None:
    script = Script(reads=dict(READS))
    result, _ = await run_async(plan, script)
    assert result.state is IterationState.VERIFIED
    assert result.verified
    assert result.reason_code is None
    assert result.failing_step is None
    assert dict(result.outputs) == {"heading": "Hello!", "post_id": "42"}
    assert [s.step_id for s in result.steps] == [
        "open",
        "title",
        "save",
        "view",
        "seen",
        "grab",
        "done_when",
    ]
    assert all(s.status is StepStatus.PASSED for s in result.steps)
    # open: tab + goto; title; save: click + 2 expects; view; seen: 1 check;
    # grab: the value it read; done_when: 1 check.
    assert result.evidence_count == 2 + 1 + 3 + 1 + 1 + 1 + 1
    assert actions(script) == ["open", "title", "save", "view"]
    assert result.iteration == 1


async def test_a_missing_target_fails_the_iteration_and_stops_there(plan: Plan) -> None:
    script = Script(before_dispatch={"title": TargetMissing('no label "Title"')})
    shots: list[Mapping[str, bytes]] = []
    result, _ = await run_async(plan, script, on_failure=lambda _plan, taken: shots.append(taken))
    assert result.state is IterationState.FAILED
    assert not result.verified
    assert result.reason_code == "TARGET_MISSING"
    assert result.failing_step == "title"
    assert [s.step_id for s in result.steps] == ["open", "title"]
    failed = result.steps[-1]
    assert failed.status is StepStatus.FAILED
    assert failed.error is not None
    assert failed.error["code"] == "TARGET_MISSING"
    assert failed.error["step"] == "title"
    assert failed.error["tab"] == "admin"
    assert actions(script) == ["open"]
    assert not any(e.startswith("step_started:save") for e in script.events)
    assert not any(e.startswith("submit_") for e in script.events)
    assert result.outputs == {}
    assert shots == [{"admin": b"png:admin"}]


async def test_a_submit_whose_expectation_fails_after_the_action_is_unknown(plan: Plan) -> None:
    script = Script(reads=dict(READS), failing_checks={SAVE_TEXT})
    result, _ = await run_async(plan, script)
    assert result.state is IterationState.UNKNOWN
    assert not result.verified
    assert result.reason_code == "OUTCOME_UNKNOWN"
    assert result.failing_step == "save"
    assert "EXPECTATION_FAILED" in (result.reason or "")
    assert actions(script).count("save") == 1  # never clicked again
    assert "step_started:view" not in script.events
    assert result.steps[-1].error is not None
    assert result.steps[-1].error["code"] == "EXPECTATION_FAILED"


async def test_a_submit_whose_check_fails_with_nothing_sent_is_failed_not_sent(
    plan: Plan,
) -> None:
    refused = SendTrace(changing_requests=0, navigated=False, validation="Title: Fill it in.")
    script = Script(reads=dict(READS), failing_checks={SAVE_TEXT}, sent=refused)
    result, _ = await run_async(plan, script)
    assert (result.state, result.reason_code) == (IterationState.FAILED, "NOT_SENT")
    assert "Title: Fill it in." in (result.reason or "")
    assert actions(script).count("save") == 1


async def test_an_error_after_the_action_of_a_submit_is_unknown_and_not_retried(
    plan: Plan,
) -> None:
    script = Script(after_dispatch={"save": NavigationFailed("connection reset")})
    result, _ = await run_async(plan, script)
    assert result.state is IterationState.UNKNOWN
    assert result.reason_code == "OUTCOME_UNKNOWN"
    assert actions(script).count("save") == 1


# An exception no check foresaw (a bug, an adapter error that slipped through) must not
# turn a dispatched submission into a traceback and a lost record.
UNFORESEEN = KeyError("pw-secret-in-the-message")


async def test_an_unexpected_error_after_the_action_of_a_submit_is_a_coded_unknown(
    plan: Plan,
) -> None:
    script = Script(after_dispatch={"save": UNFORESEEN})
    result, recorder = await run_async(plan, script)
    assert result.state is IterationState.UNKNOWN
    assert result.reason_code == "OUTCOME_UNKNOWN"
    assert result.failing_step == "save"
    assert "unexpected KeyError" in (result.reason or "")
    assert "pw-secret" not in (result.reason or "")  # the message may quote a secret
    assert actions(script).count("save") == 1  # never retried
    assert recorder.finished[-1].step_id == "save"
    assert recorder.finished[-1].status is StepStatus.FAILED
    assert recorder.finished[-1].error is not None
    assert recorder.finished[-1].error["code"] == "OUTCOME_UNKNOWN"


async def test_an_unexpected_error_in_a_later_step_after_a_dispatch_is_unknown(
    plan: Plan,
) -> None:
    script = Script(reads=dict(READS), crashing_checks={'visible heading "Hello"': UNFORESEEN})
    result, recorder = await run_async(plan, script)
    assert result.state is IterationState.UNKNOWN
    assert result.reason_code == "OUTCOME_UNKNOWN"
    assert result.failing_step == "seen"
    assert [r.step_id for r in recorder.finished][-1] == "seen"


async def test_an_unexpected_error_reading_outputs_after_a_dispatch_is_unknown(
    plan: Plan,
) -> None:
    script = Script(reads=dict(READS), crashing_reads={("admin", "url"): UNFORESEEN})
    result, _ = await run_async(plan, script)
    assert result.state is IterationState.UNKNOWN
    assert result.reason_code == "OUTCOME_UNKNOWN"
    assert "unexpected KeyError" in (result.reason or "")
    assert result.outputs == {}


async def test_an_unexpected_error_before_any_dispatch_is_raised_as_itself(plan: Plan) -> None:
    # Nothing was sent, so nothing is unknown: a bug shows as itself, not as a verdict.
    script = Script(before_dispatch={"save": UNFORESEEN})
    with pytest.raises(KeyError):
        await run_async(plan, script)
    assert "submit_in_flight:save" not in script.events


async def test_a_failure_before_the_submit_action_is_failed_not_unknown(plan: Plan) -> None:
    script = Script(before_dispatch={"save": TargetMissing('no button "Save"')})
    result, _ = await run_async(plan, script)
    assert result.state is IterationState.FAILED
    assert result.reason_code == "TARGET_MISSING"
    assert result.failing_step == "save"
    assert "submit_in_flight:save" not in script.events
    assert "save" not in actions(script)


async def test_a_failing_done_when_fails_the_iteration(plan: Plan) -> None:
    script = Script(reads=dict(READS), failing_checks={DONE})
    result, _ = await run_async(plan, script)
    assert result.state is IterationState.FAILED
    assert result.reason_code == "EXPECTATION_FAILED"
    assert result.failing_step == "done_when"
    assert result.steps[-1].step_id == "done_when"
    assert result.steps[-1].status is StepStatus.FAILED
    assert result.outputs == {}
    # The submission's result URL and the extract step (at their turns) read the page; no
    # output was read after done_when failed.
    reads = [e for e in script.events if e.startswith("read:")]
    assert reads == ["read:admin:url", "read:preview:title"]


async def test_an_output_regex_that_does_not_match_fails_the_iteration(plan: Plan) -> None:
    reads = dict(READS)
    reads[("admin", "url")] = "http://127.0.0.1:9/admin/posts/"
    result, _ = await run_async(plan, Script(reads=reads))
    assert result.state is IterationState.FAILED
    assert result.reason_code == "EXPECTATION_FAILED"
    assert result.failing_step == "outputs"
    assert "post_id" in (result.reason or "")
    assert result.outputs == {}


async def test_a_failing_expectation_on_a_plain_step_is_failed(plan: Plan) -> None:
    text = RECIPE.replace(
        "  - {id: view, tab: admin, click: {target: {role: link, name: View}}}",
        "  - id: view\n    tab: admin\n    click: {target: {role: link, name: View}}\n"
        "    expect: [{title: {contains: Post}}]",
    )
    script = Script(failing_checks={"title {'contains': 'Post'}"})
    result, _ = await run_async(make_plan(text), script)
    assert result.state is IterationState.FAILED
    assert result.failing_step == "view"


async def test_a_popup_that_never_opened_is_tab_closed(plan: Plan) -> None:
    class NoPopup(FakeSession):
        async def perform(
            self, step: BoundStep, *, before_dispatch: Callable[[], None] = lambda: None
        ) -> tuple[Evidence, ...]:
            before_dispatch()
            return ()

    host = FakeHost(Script())
    session = NoPopup(host.script)

    @asynccontextmanager
    async def only(plan: Plan) -> AsyncIterator[BrowserSession]:
        yield session

    host.session = only  # type: ignore[method-assign]
    result = await ProgramRunner(host, sleep=no_sleep).run_iteration(plan)
    assert result.state is IterationState.FAILED
    assert result.reason_code == "TAB_CLOSED"
    assert result.failing_step == "seen"


async def test_a_session_that_cannot_start_is_failed(plan: Plan) -> None:
    script = Script(session_error=NavigationFailed("browser gone"))
    result, _ = await run_async(plan, script)
    assert result.state is IterationState.FAILED
    assert result.reason_code == "NAVIGATION_FAILED"
    assert result.steps == ()


async def test_a_safe_step_is_retried_after_a_navigation_failure(plan: Plan) -> None:
    script = Script(reads=dict(READS), flaky={"open": [NavigationFailed("503", status=503)]})
    result, _ = await run_async(plan, script)
    assert result.verified
    assert result.steps[0].attempts == 2


async def test_a_stop_request_stops_before_the_next_step(plan: Plan) -> None:
    script = Script(reads=dict(READS))
    calls = iter([False, False, True])
    result, _ = await run_async(plan, script, should_stop=lambda: next(calls, True))
    assert result.state is IterationState.STOPPED
    assert not result.verified
    assert [s.step_id for s in result.steps] == ["open", "title"]


async def test_the_session_is_closed_on_every_path(plan: Plan) -> None:
    for script in (
        Script(reads=dict(READS)),
        Script(before_dispatch={"title": TargetMissing("x")}),
        Script(failing_checks={SAVE_URL}),
    ):
        await run_async(plan, script)
        assert script.events[0] == "session:open"
        assert script.events[-1] == "session:close"


# --- the recorder ---------------------------------------------------------------------------


async def test_recorder_calls_come_in_order_with_in_flight_before_the_action(
    plan: Plan,
) -> None:
    script = Script(reads=dict(READS))
    result, _ = await run_async(plan, script)
    assert result.verified
    events = [e for e in script.events if not e.startswith(("check:", "read:", "open:"))]
    save = events[events.index("step_started:save") : events.index("step_finished:save:passed") + 1]
    assert save == [
        "step_started:save",
        "resolve:save",
        "submit_in_flight:save",
        "action:save",
        "submit_dispatched:save",
        "step_finished:save:passed",
    ]
    started = [e.split(":")[1] for e in events if e.startswith("step_started:")]
    finished = [e.split(":")[1] for e in events if e.startswith("step_finished:")]
    assert started == finished == ["open", "title", "save", "view", "seen", "grab"]
    # Every step finishes before the next one starts.
    for step_id, following in itertools.pairwise(started):
        assert events.index(f"step_finished:{step_id}:passed") < events.index(
            f"step_started:{following}"
        )
    # Only the submit step is ever in flight.
    assert [e for e in events if e.startswith("submit_")] == [
        "submit_in_flight:save",
        "submit_dispatched:save",
    ]


async def test_recorder_sees_a_failed_unknown_submit_without_dispatched_missing(
    plan: Plan,
) -> None:
    script = Script(failing_checks={SAVE_URL})
    _, recorder = await run_async(plan, script)
    assert [e for e in script.events if e.startswith(("submit_", "step_finished:save"))] == [
        "submit_in_flight:save",
        "submit_dispatched:save",
        "step_finished:save:failed",
    ]
    assert recorder.finished[-1].status is StepStatus.FAILED


async def test_an_already_verified_submission_is_not_dispatched_again(plan: Plan) -> None:
    # The journal answers "already verified" for this key: nothing is sent, the recorded
    # result stands, and the step passes without checking its expectations again.
    script = Script(reads=dict(READS), failing_checks={SAVE_URL, SAVE_TEXT})
    result, _ = await run_async(plan, script, already_verified=frozenset({"save"}))
    assert result.verified
    assert "save" not in actions(script)
    assert "submit_dispatched:save" not in script.events
    save = next(s for s in result.steps if s.step_id == "save")
    assert [e.kind for e in save.evidence] == ["submission"]


async def test_recorder_is_told_a_failed_step_finished(plan: Plan) -> None:
    script = Script(before_dispatch={"title": TargetMissing("x")})
    _, recorder = await run_async(plan, script)
    assert [r.step_id for r in recorder.finished] == ["open", "title"]
    assert recorder.finished[-1].error is not None


# --- apply_regex ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "pattern", "expected"),
    [
        ("abc", None, "abc"),
        ("id=42", r"id=(\d+)", "42"),
        ("id=42", r"\d+", "42"),
        ("a-b", r"(a)-(b)", "a"),
    ],
)
def test_apply_regex(raw: str, pattern: str | None, expected: str) -> None:
    assert apply_regex(raw, pattern, "out") == expected


def test_apply_regex_without_a_match_is_expectation_failed() -> None:
    with pytest.raises(ExpectationFailed, match="'out'"):
        apply_regex("none", r"id=(\d+)", "out")


async def test_a_run_whose_dispatched_submission_meets_an_unexpected_error_is_blocked(
    tmp_path: Path,
) -> None:
    """Through ``execute_run`` with the real journal: blocked, the record kept, no traceback."""
    recipe = tmp_path / "post.yaml"
    recipe.write_text(RECIPE)
    request = build_request({"recipe": str(recipe), "params": (), "repeat": 2})
    script = Script(reads=dict(READS), after_dispatch={"save": UNFORESEEN})
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=FakeHost(script), journal=journal)
        submission = journal.submission(outcome.run_id, 1, "save")
    assert outcome.status == "blocked"
    assert [r.state for r in outcome.results] == [IterationState.UNKNOWN]  # no 2nd iteration
    # The action raised, so whether it went out is not known: still in flight, unsettled.
    assert submission is not None
    assert submission.state == "in_flight"
    detail = readers.get_run(tmp_path / "journal.db", outcome.run_id)
    assert detail.summary.status == "blocked"
    (iteration,) = detail.iterations
    assert (iteration.state, iteration.reason_code) == ("unknown", "OUTCOME_UNKNOWN")
    save = next(step for step in iteration.steps if step.step_id == "save")
    assert save.status == "failed"
