"""Run the adapter's Playwright work in a task of its own, to keep Playwright's client cheap.

Playwright's Python client captures the caller's stack on every API call: it walks up to
50 frames and reads the locals of each frame outside site-packages to name it. Called
from the runner, a step's Playwright calls sit under a dozen Northstar frames (lane,
repeat loop, iteration, step, attempt, session, check), and that walk cost about 3 ms
of CPU per iteration of the contact-form recipe (``time.process_time`` over 20-iteration
runs). The session's step methods and the host's context calls are wrapped.

A task's stack starts at the event loop, so a call made inside one carries only the
adapter's own frames. The caller awaits the task: its result, its exception and a
cancellation of the caller (Ctrl-C) pass through unchanged, and the task runs in a copy
of the caller's context, so the secrets and log fields bound for the iteration hold.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["in_own_task"]

P = ParamSpec("P")
R = TypeVar("R")


def in_own_task(
    method: Callable[P, Coroutine[Any, Any, R]],
) -> Callable[P, Coroutine[Any, Any, R]]:
    """``method``, run in a new task that the caller awaits."""

    @functools.wraps(method)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.ensure_future(method(*args, **kwargs))

    return run
