"""Repeat with proof: the loop over iterations, each verified before the next may start.

Repeat is what the person asked for (N iterations, or one per row); it is not retry.
``repeat_program`` is a plain loop over injected callables (run one iteration, wait, ask
whether to stop) so its rules are tested without a browser or a clock:

- an iteration that is not verified raises ``ProgramIterationNotVerified`` and the next
  one is never started;
- the interval is waited between iterations, never before the first or after the last.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from northstar.errors import ProgramIterationNotVerified, RepeatOptionsInvalid
from northstar.results import IterationResult, StepResult

__all__ = [
    "MAX_COUNT",
    "MAX_INTERVAL_S",
    "RepeatOptions",
    "RepeatSummary",
    "repeat_program",
]

MAX_COUNT = 100_000
MAX_INTERVAL_S = 86_400


class RepeatOptions(BaseModel):
    """How many iterations, and how many whole seconds to wait between them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    count: Annotated[StrictInt, Field(ge=1, le=MAX_COUNT)] = 1
    interval_s: Annotated[StrictInt, Field(ge=0, le=MAX_INTERVAL_S)] = 0

    @classmethod
    def of(cls, count: object = 1, interval_s: object = 0) -> RepeatOptions:
        """Validate, turning pydantic's error into one that names the bound."""
        try:
            return cls.model_validate({"count": count, "interval_s": interval_s})
        except ValidationError as exc:
            first = exc.errors()[0]
            name = str(first["loc"][0])
            raise RepeatOptionsInvalid(_bound_message(name, first.get("input"))) from None


def _bound_message(name: str, value: object) -> str:
    if name == "count":
        return f"repeat count must be a whole number from 1 to {MAX_COUNT}, got {value!r}"
    return f"interval must be a whole number of seconds from 0 to {MAX_INTERVAL_S}, got {value!r}"


@dataclass(frozen=True)
class RepeatSummary:
    """What the verified iterations contributed, each part tagged with its iteration."""

    requested: int
    verified: tuple[IterationResult, ...] = ()
    steps: tuple[tuple[int, StepResult], ...] = ()
    outputs: tuple[tuple[int, str, str], ...] = ()
    evidence_count: int = 0
    model_calls: int | None = 0
    last: IterationResult | None = field(default=None)

    @classmethod
    def of(cls, requested: int, verified: Sequence[IterationResult]) -> RepeatSummary:
        """The summary of these verified iterations, built in one pass (linear in size)."""
        calls = [result.model_calls for result in verified]
        return cls(
            requested=requested,
            verified=tuple(verified),
            steps=tuple((r.iteration, s) for r in verified for s in r.steps),
            outputs=tuple((r.iteration, k, v) for r in verified for k, v in r.outputs.items()),
            evidence_count=sum(result.evidence_count for result in verified),
            model_calls=None if None in calls else sum(c for c in calls if c is not None),
            last=verified[-1] if verified else None,
        )

    def add(self, result: IterationResult) -> RepeatSummary:
        """A new summary including one more verified iteration."""
        return RepeatSummary.of(self.requested, [*self.verified, result])

    @property
    def all_verified(self) -> bool:
        return len(self.verified) == self.requested


IterationFn = Callable[[int], Awaitable[IterationResult]]


async def repeat_program(
    run_iteration: IterationFn,
    options: RepeatOptions,
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    should_stop: Callable[[], bool] = lambda: False,
    numbers: Sequence[int] | None = None,
) -> RepeatSummary:
    """Run iterations ``1..count`` (or exactly ``numbers``, e.g. one lane's share) in order;
    raise at the first one that is not verified.

    The definition guard is the iteration's own business (``run_iteration`` checks it
    before it dispatches anything: ``northstar.run.execution``), so this loop holds only
    the order, the interval and the verdict.

    ``model_calls`` is summed over verified iterations; if any did not report it, the
    total is unknown (``None``), never 0. A stop request ends the loop quietly before the
    next iteration (the caller records that the run was stopped).
    """
    todo = list(range(1, options.count + 1) if numbers is None else numbers)
    verified: list[IterationResult] = []
    for position, number in enumerate(todo):
        if position and options.interval_s:
            await sleep(options.interval_s)
        if should_stop():
            break
        result = await run_iteration(number)
        if not result.verified:
            raise ProgramIterationNotVerified(
                f"iteration {number} was not verified ({result.state}: "
                f"{result.reason_code or 'no reason recorded'})",
                result=result,
                verified=RepeatSummary.of(len(todo), verified),
                iteration=number,
                step=result.failing_step,
            )
        verified.append(result)
    return RepeatSummary.of(len(todo), verified)
