"""The run engine's submit failpoints, on a program's submissions too.

``FailpointSession`` wraps an iteration's browser session and pauses at the points
``northstar.run.failpoints`` names, in the order a recipe's submit step passes them, so a
crash test can kill the worker (and with it the program) at exactly the same moments:
``before_in_flight``, ``after_in_flight`` (the in-flight record is durable, nothing
sent), ``after_dispatch`` (sent, outcome not recorded). Other steps pass straight through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from northstar.browser import BrowserSession, Reading
from northstar.plan.model import BoundStep, BoundTab, Plan
from northstar.recipe.model import Check
from northstar.results import Evidence
from northstar.run.failpoints import Failpoint

if TYPE_CHECKING:
    from northstar.monitor.observation import ElementRef, Observation

__all__ = ["FailpointSession"]


class FailpointSession:
    """A ``BrowserSession`` that pauses at the armed failpoint around a submission."""

    def __init__(self, inner: BrowserSession, failpoint: Failpoint, iteration: int) -> None:
        self._inner, self._failpoint, self._iteration = inner, failpoint, iteration

    def _guarded(self, before_dispatch: Callable[[], None]) -> Callable[[], None]:
        def guarded() -> None:
            self._failpoint("before_in_flight", self._iteration)
            before_dispatch()
            self._failpoint("after_in_flight", self._iteration)

        return guarded

    async def perform(
        self, step: BoundStep, *, before_dispatch: Callable[[], None] = lambda: None
    ) -> tuple[Evidence, ...]:
        if not step.is_submit:
            return await self._inner.perform(step, before_dispatch=before_dispatch)
        evidence = await self._inner.perform(step, before_dispatch=self._guarded(before_dispatch))
        self._failpoint("after_dispatch", self._iteration)
        return evidence

    async def perform_on_reference(
        self,
        step: BoundStep,
        reference: ElementRef,
        *,
        before_dispatch: Callable[[], None] = lambda: None,
    ) -> tuple[Evidence, ...]:
        guarded = self._guarded(before_dispatch) if step.is_submit else before_dispatch
        evidence = await self._inner.perform_on_reference(step, reference, before_dispatch=guarded)
        if step.is_submit:
            self._failpoint("after_dispatch", self._iteration)
        return evidence

    async def begin(self, plan: Plan) -> None:
        await self._inner.begin(plan)

    def has_tab(self, role: str) -> bool:
        return self._inner.has_tab(role)

    async def open_tab(self, tab: BoundTab, *, timeout_ms: int) -> Evidence:
        return await self._inner.open_tab(tab, timeout_ms=timeout_ms)

    async def check(self, check: Check, *, tab: str, timeout_ms: int) -> Evidence:
        return await self._inner.check(check, tab=tab, timeout_ms=timeout_ms)

    async def read(self, reading: Reading, *, timeout_ms: int) -> str:
        return await self._inner.read(reading, timeout_ms=timeout_ms)

    async def observe(self, tab: str) -> Observation:
        return await self._inner.observe(tab)

    async def screenshot(self, tab: str) -> bytes | None:
        return await self._inner.screenshot(tab)
