"""Playwright's driver, started before Northstar has imported its core and checked input.

The driver is a Node.js process. On a 2-core machine it takes about 0.4 s to boot, as
long as Northstar's own imports and input checks, so ``northstar run`` starts it first
and the two overlap (the cold start of issue 7). Only the driver starts early, never a
browser: the browser is launched once the input is valid, and a driver that no host took
(bad input, ``--help``) is stopped before the command exits.

One early driver per process: ``start_early`` schedules it on a loop, the first
``PlaywrightHost`` entered in that loop takes it (and then owns it), and ``discard_early``
stops it if nobody did.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress

from playwright.async_api import Playwright, async_playwright

__all__ = ["discard_early", "start_early", "take_early"]

_pending: asyncio.Task[Playwright] | None = None


def start_early(loop: asyncio.AbstractEventLoop) -> None:
    """Schedule the driver's start on ``loop``; it runs whenever the loop next runs."""
    global _pending
    if _pending is None:
        _pending = loop.create_task(async_playwright().start(), name="northstar-early-driver")


async def take_early() -> Playwright | None:
    """The early driver if one was started on the running loop; the caller must stop it.

    A driver that failed to start raises here, as a normal start would.
    """
    global _pending
    task = _pending
    if task is None or task.get_loop() is not asyncio.get_running_loop():
        return None
    _pending = None
    return await task


async def discard_early() -> None:
    """Stop the early driver if no host took it; a driver that failed to start is ignored."""
    global _pending
    task, _pending = _pending, None
    if task is None:
        return
    if not task.done():
        with suppress(Exception):
            await task
    if task.cancelled() or task.exception() is not None:
        return
    await task.result().stop()
