"""An in-memory browser that answers at once, and the timings of section (b) taken on it.

Section (b) of ``run_bench`` measures what Northstar adds per step without the browser's
own work: ``ProgramRunner`` and ``execute_run`` drive this fake browser while recording
into a real journal. It is a module of its own because the fake is a whole ``BrowserHost``
and recorder that no other section touches.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Self

from northstar.bench._workload import BenchFailed, create_run, recipe_request
from northstar.browser import BrowserSession, Reading, SendTrace
from northstar.journal import Journal
from northstar.monitor.observation import ElementRef, Observation
from northstar.plan.compiler import bind
from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check, Target
from northstar.results import Evidence, StepResult
from northstar.run.execution import execute_run
from northstar.run.recorder import JournalRecorder
from northstar.run.runner import IterationRecorder, ProgramRunner

__all__ = ["FAKE_BASE_URL", "runner_step_times", "whole_run_seconds"]

FAKE_BASE_URL = "http://127.0.0.1:9"  # bound into the fake browser's plans, never contacted


class _InstantSession:
    """A ``BrowserSession`` whose every call succeeds at once: only Northstar's work is left."""

    def __init__(self) -> None:
        self._open: set[str] = set()

    def has_tab(self, role: str) -> bool:
        return role in self._open

    async def open_tab(self, tab: BoundTab, *, timeout_ms: int) -> Evidence:
        self._open.add(tab.role)
        return Evidence("tab_opened", tab.role, f"open {tab.start}", True, tab.start or "")

    async def perform(
        self, step: BoundStep, *, before_dispatch: Callable[[], None] = lambda: None
    ) -> tuple[Evidence, ...]:
        before_dispatch()
        return ()

    async def perform_on_reference(
        self, step: BoundStep, reference: ElementRef, **_: object
    ) -> tuple[Evidence, ...]:
        raise NotImplementedError("the stored path acts on targets, never on references")

    async def check(self, check: Check, *, tab: str, timeout_ms: int) -> Evidence:
        return Evidence(check.kind, tab, check.describe(), True, "as expected")

    async def send_trace(self, tab: str) -> SendTrace:
        return SendTrace(changing_requests=1, navigated=True)  # every submission is sent

    async def read(self, reading: Reading, *, timeout_ms: int) -> str:
        return f"{FAKE_BASE_URL}/form/thanks?id=1" if reading.source == "url" else "Thank you"

    async def submits_to(self, tab: str, target: Target, *, timeout_ms: int) -> str | None:
        return None

    async def screenshot(self, tab: str) -> bytes | None:
        return None

    def redacted(self, text: str) -> str:
        return text

    async def begin(self, plan: Plan) -> None:
        return None

    async def storage_state(self) -> dict[str, Any]:
        return {"cookies": [], "origins": []}

    async def observe(self, tab: str) -> Observation:
        # The stored path observes a step's tab once per run, for a later diagnosis.
        return Observation(tab=tab, url=f"{FAKE_BASE_URL}/form", snapshot_id="fake")


class _InstantHost:
    """A ``BrowserHost`` handing out ``_InstantSession``s."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None

    @asynccontextmanager
    async def session(
        self, plan: Plan, *, storage_state: str | None = None
    ) -> AsyncIterator[BrowserSession]:
        yield _InstantSession()

    def read_only(self, storage_state: str | None) -> Self:
        return self  # it sends nothing anywhere


class _TimedRecorder:
    """The journal's recorder, timing each step from its start record to its result record."""

    def __init__(self, inner: IterationRecorder) -> None:
        self._inner = inner
        self._started = 0.0
        self.step_ms: list[float] = []

    def step_started(self, plan: Plan, step: BoundStep) -> None:
        self._started = time.perf_counter()
        self._inner.step_started(plan, step)

    def submit_in_flight(self, plan: Plan, step: BoundStep) -> bool:
        return self._inner.submit_in_flight(plan, step)

    def submit_dispatched(self, plan: Plan, step: BoundStep) -> None:
        self._inner.submit_dispatched(plan, step)

    def step_finished(self, plan: Plan, result: StepResult) -> None:
        self._inner.step_finished(plan, result)
        self.step_ms.append((time.perf_counter() - self._started) * 1000)


async def runner_step_times(journal: Journal, iterations: int) -> list[float]:
    """Milliseconds per step of ``ProgramRunner`` on the fake browser with a real journal."""
    request = recipe_request(FAKE_BASE_URL, 1)
    run_id = create_run(journal, "bench-runner", iterations)
    recorder = _TimedRecorder(JournalRecorder(journal, run_id))
    runner = ProgramRunner(_InstantHost(), recorder=recorder)
    for number in range(1, iterations + 1):
        plan = bind(request.compiled, request.rows[0], base_url=FAKE_BASE_URL, iteration=number)
        journal.start_iteration(run_id, number, params_fingerprint=plan.params_fingerprint)
        result = await runner.run_iteration(plan)
        if not result.verified:
            raise BenchFailed(f"fake-browser iteration {number}: {result.reason}")
        journal.finish_iteration(run_id, result)
    return recorder.step_ms


async def whole_run_seconds(journal: Journal, iterations: int) -> float:
    """Seconds for ``execute_run`` of ``iterations`` iterations on the fake browser."""
    request = recipe_request(FAKE_BASE_URL, iterations)
    started = time.perf_counter()
    outcome = await execute_run(request, host=_InstantHost(), journal=journal)
    elapsed = time.perf_counter() - started
    if outcome.status != "verified":
        raise BenchFailed(f"the fake-browser run ended {outcome.status}: {outcome.error}")
    return elapsed
