"""Repeat with proof: the loop over iterations, each verified before the next may start.

Repeat is what the person asked for (N iterations, or one per row); it is not retry.
``repeat_program`` is a plain loop over injected callables (run one iteration, wait, ask
whether to stop) so its rules are tested without a browser or a clock:

- an iteration that is not verified raises ``ProgramIterationNotVerified`` and the next
  one is never started;
- the interval is waited between iterations, never before the first or after the last.

A long run keeps counts, not every result: the summary holds the last ``KEEP_RESULTS``
verified results (their steps and outputs) and counts all of them; the journal has every
iteration, and a run of up to ``KEEP_RESULTS`` iterations keeps them all.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from northstar.errors import ProgramIterationNotVerified, RepeatOptionsInvalid
from northstar.results import IterationResult, IterationState, StepResult

__all__ = [
    "KEEP_RESULTS",
    "MAX_COUNT",
    "MAX_INTERVAL_S",
    "ON_FAILURE",
    "RepeatOptions",
    "RepeatSummary",
    "VerifiedTally",
    "may_go_past",
    "repeat_program",
]

MAX_COUNT = 100_000
MAX_INTERVAL_S = 86_400
KEEP_RESULTS = 1000  # verified results kept in memory; the journal keeps every one


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
    counted: int | None = None  # verified iterations, when more than ``verified`` holds

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
        """A new summary including one more verified iteration (one that keeps them all)."""
        return RepeatSummary.of(self.requested, [*self.verified, result])

    @classmethod
    def merge(cls, requested: int, parts: Sequence[RepeatSummary]) -> RepeatSummary:
        """One summary of several lanes': counts added, the last verified results kept."""
        kept = sorted((r for part in parts for r in part.verified), key=lambda r: r.iteration)
        calls = [part.model_calls for part in parts]
        return replace(
            cls.of(requested, kept[-KEEP_RESULTS:]),
            evidence_count=sum(part.evidence_count for part in parts),
            model_calls=None if None in calls else sum(c for c in calls if c is not None),
            counted=sum(part.verified_count for part in parts),
        )

    @property
    def verified_count(self) -> int:
        """How many iterations were verified (``verified`` may hold only the last ones)."""
        return len(self.verified) if self.counted is None else self.counted

    @property
    def all_verified(self) -> bool:
        return self.verified_count == self.requested


class VerifiedTally:
    """Verified results as a summary needs them, in bounded memory (see the module doc)."""

    def __init__(self, requested: int, keep: int | None = None) -> None:
        self.requested = requested
        self._kept: deque[IterationResult] = deque(maxlen=keep or KEEP_RESULTS)
        self._count = 0
        self._evidence = 0
        self._calls: int | None = 0

    def add(self, result: IterationResult) -> None:
        self._kept.append(result)
        self._count += 1
        self._evidence += result.evidence_count
        calls = result.model_calls
        self._calls = None if self._calls is None or calls is None else self._calls + calls

    def summary(self) -> RepeatSummary:
        return replace(
            RepeatSummary.of(self.requested, list(self._kept)),
            evidence_count=self._evidence,
            model_calls=self._calls,
            counted=self._count,
        )


IterationFn = Callable[[int], Awaitable[IterationResult]]
ON_FAILURE = ("stop", "continue")


def may_go_past(result: IterationResult, on_failure: str) -> bool:
    """Whether a batch goes on after this unverified iteration: only under
    ``--on-failure continue``, and only past one that failed with nothing sent (``NOT_SENT``),
    which cannot have made anything on the site."""
    return (
        on_failure == "continue"
        and result.state is IterationState.FAILED
        and result.reason_code == "NOT_SENT"
    )


async def repeat_program(
    run_iteration: IterationFn,
    options: RepeatOptions,
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    should_stop: Callable[[], bool] = lambda: False,
    numbers: Sequence[int] | None = None,
    tally: VerifiedTally | None = None,
    go_past: Callable[[IterationResult], bool] = lambda result: False,
) -> RepeatSummary:
    """Run iterations ``1..count`` (or exactly ``numbers``, e.g. one lane's share) in order;
    raise at the first one that is not verified.

    The definition guard is the iteration's own business (``run_iteration`` checks it
    before it dispatches anything: ``northstar.run.execution``), so this loop holds only
    the order, the interval and the verdict.

    ``model_calls`` is summed over verified iterations; if any did not report it, the
    total is unknown (``None``), never 0. A stop request ends the loop quietly before the
    next iteration (the caller records that the run was stopped). ``tally``: the caller's
    count of verified iterations, still there when another error ends the loop.
    ``go_past``: an unverified iteration it accepts does not end the loop (``may_go_past``).
    """
    todo = list(range(1, options.count + 1) if numbers is None else numbers)
    verified = VerifiedTally(len(todo)) if tally is None else tally
    for position, number in enumerate(todo):
        if position and options.interval_s:
            await sleep(options.interval_s)
        if should_stop():
            break
        result = await run_iteration(number)
        if not result.verified and go_past(result):
            continue
        if not result.verified:
            raise ProgramIterationNotVerified(
                f"iteration {number} was not verified ({result.state}: "
                f"{result.reason_code or 'no reason recorded'})",
                result=result,
                verified=verified.summary(),
                iteration=number,
                step=result.failing_step,
            )
        verified.add(result)
    return verified.summary()
