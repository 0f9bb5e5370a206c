"""Playwright's driver, started before Northstar has imported its core and checked input.

The driver is a Node.js process. On a 2-core machine it takes about 0.4 s to boot, as
long as Northstar's own imports and input checks, so ``northstar run`` starts it first
and the two overlap (the cold start of issue 7). Only the driver starts early, never a
browser: the browser is launched once the input is valid, and a driver that no host took
(bad input, ``--help``) is stopped before the command exits.

One early driver per process: ``start_early`` schedules it on a loop, the first
``PlaywrightHost`` entered in that loop takes it (and then owns it), and ``discard_early``
stops it if nobody did.

The driver runs in a session of its own (``driver_loop``), out of the terminal's reach. A
terminal sends Ctrl-C's SIGINT to its whole foreground process group: the driver used to
get it too, closed the browser (Playwright's own ``handleSIGINT``) and exited, so a step
in progress failed half-way (TAB_CLOSED, or an unknown outcome) instead of finishing.
Chromium is the driver's child and Playwright already starts it as the leader of its own
process group. Northstar catches the signal itself and stops the driver and the browser
on its way out (``northstar._stop_requests``); a killed Northstar closes the driver's
stdin, and the driver then closes the browser and exits.

How: playwright-python spawns the driver with ``asyncio.create_subprocess_exec`` on the
running loop, and that goes through the loop's public ``subprocess_exec``, whose keyword
arguments reach ``subprocess.Popen``. ``driver_loop`` makes a loop whose children start
with ``start_new_session=True`` unless the caller says otherwise. The alternatives were
worse: patching Playwright's transport module (private, renamed between releases: it was
``_transport.py``), a ``PLAYWRIGHT_NODEJS_PATH`` wrapper script that calls ``setsid``
(a file to write and keep executable, and a second exec on every start), or ignoring
SIGINT before the spawn (Node resets signal dispositions when it boots).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import suppress
from typing import Any, TypeVar

from playwright.async_api import Playwright, async_playwright

__all__ = ["OwnSessionLoop", "discard_early", "driver_loop", "start_early", "take_early"]

P = TypeVar("P", bound=asyncio.BaseProtocol)

_pending: asyncio.Task[Playwright] | None = None


class OwnSessionLoop(asyncio.SelectorEventLoop):
    """An event loop whose child processes start in a session of their own (no Ctrl-C)."""

    async def subprocess_exec(
        self, protocol_factory: Callable[[], P], program: Any, *args: Any, **kwargs: Any
    ) -> tuple[asyncio.SubprocessTransport, P]:
        kwargs.setdefault("start_new_session", True)
        return await super().subprocess_exec(protocol_factory, program, *args, **kwargs)


def driver_loop() -> asyncio.AbstractEventLoop:
    """A new loop for a command that starts Playwright's driver (see the module docstring)."""
    return OwnSessionLoop()


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
