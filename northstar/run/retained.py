"""What a run keeps of its iterations' results in memory: bounded, whatever its length.

Each result carries its steps and evidence; a run of 60,000 iterations that kept them all
held hundreds of megabytes for nothing, since the journal already has every one. A run
keeps every result that is not verified (a run stops at its first one per lane, so they
are few), the last ``keep`` verified results, and one byte per iteration saying whether
it began (for "not started"). A run of up to ``keep`` iterations keeps every result.
"""

from __future__ import annotations

from collections import deque
from itertools import chain

from northstar.results import IterationResult
from northstar.run.repeat import KEEP_RESULTS

__all__ = ["RetainedResults"]


class RetainedResults:
    """The results a run's caller needs: see the module docstring."""

    def __init__(self, keep: int | None = None) -> None:
        self._unverified: list[IterationResult] = []
        self._verified: deque[IterationResult] = deque(maxlen=keep or KEEP_RESULTS)
        self._begun = bytearray()

    def add(self, result: IterationResult) -> None:
        (self._verified if result.verified else self._unverified).append(result)
        number = result.iteration
        if number >= len(self._begun):
            self._begun.extend(bytes(number + 1 - len(self._begun)))
        self._begun[number] = 1

    def in_order(self) -> list[IterationResult]:
        """The kept results by iteration number."""
        return sorted(chain(self._unverified, self._verified), key=lambda r: r.iteration)

    def not_started(self, requested: int) -> tuple[int, ...]:
        """Numbers ``1..requested`` that never began (all of them, not only the kept ones)."""
        begun = self._begun
        return tuple(n for n in range(1, requested + 1) if n >= len(begun) or not begun[n])
