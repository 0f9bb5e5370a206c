"""Named pause points for crash tests: prove that a kill at any moment loses nothing.

A failpoint is armed only by the environment variable ``NORTHSTAR_FAILPOINT`` (for
example ``after_in_flight@2``: the point's name and the iteration). When a submission
reaches an armed point it prints ``failpoint NAME ITERATION`` on stderr and waits for a
line on stdin, so a test can kill the worker exactly there. Unarmed, a point costs one
comparison. The points sit in the host's dispatch routine (``northstar.run.dispatch``), so
a recipe's, an agent's and a program's submissions pass them alike, in this order:

- ``before_in_flight``: the target was found; nothing is recorded or sent yet;
- ``after_in_flight``: the in-flight record is durable; the action is not done yet;
- ``after_dispatch``: the action was done; its outcome is not verified yet.

One more point is outside any iteration: ``startup@0``, in ``northstar run`` once the
driver's start is scheduled and the CLI imported, before the input is checked and the
browser launched (``northstar._early_start``). And one is after the dispatch routine:
``after_verdict``, once the iteration's verdict is journaled and before what follows it
(a positive probe control, a worker's update of the run's status): a stop or an outage
there finds nothing in progress (``northstar.run.execution``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping

__all__ = [
    "AFTER_VERDICT",
    "FAILPOINT_ENV",
    "POINTS",
    "STARTUP",
    "Failpoint",
    "failpoint_from_environ",
    "no_failpoint",
]

FAILPOINT_ENV = "NORTHSTAR_FAILPOINT"
POINTS = ("before_in_flight", "after_in_flight", "after_dispatch")
STARTUP = "startup"
AFTER_VERDICT = "after_verdict"

Failpoint = Callable[[str, int], None]


def no_failpoint(name: str, iteration: int) -> None:
    return None


def failpoint_from_environ(environ: Mapping[str, str] | None = None) -> Failpoint:
    """The armed point from the environment, or a no-op."""
    spec = (os.environ if environ is None else environ).get(FAILPOINT_ENV, "")
    if not spec:
        return no_failpoint
    name, _, number = spec.partition("@")
    armed = (name, int(number or 1))

    def pause(point: str, iteration: int) -> None:
        if (point, iteration) == armed:
            sys.stderr.write(f"failpoint {point} {iteration}\n")
            sys.stderr.flush()
            sys.stdin.readline()  # blocks until the test kills the worker (or says go on)

    return pause
