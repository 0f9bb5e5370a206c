"""``northstar run`` boots Playwright's driver while it imports its code and checks input.

Measured on a 2-core machine, the driver (a Node.js process) takes about 0.4 s to start and
Northstar's imports about as long; one after the other they made the cold start 1.5 times
a raw Playwright launch. ``early_start`` runs the two side by side: it creates the event
loop the command will run on, schedules the driver's start on it
(``browser_adapters.early_driver``), and imports the CLI and the run machinery in a worker
thread while the loop spawns the driver. The command then checks its input on the main
thread as before and runs on that same loop with ``run_on_loop``, where the host takes
the driver. Bad input is still reported before any browser is launched; the unused
driver is stopped on the way out.

The loop is ``browser_adapters.early_driver.driver_loop()``: the driver it spawns runs in
a session of its own, out of reach of the terminal's Ctrl-C (Northstar stops it itself).
``run_on_loop`` uses the same kind of loop when there is no early one (``resume``,
``reconcile``). The failpoint ``startup@0`` (``northstar.run.failpoints``) pauses here,
once the driver's start is scheduled and the CLI imported, for tests of a stop at start-up.

The console script enters here (``northstar.__main__``), before ``northstar.cli`` is
imported: click, structlog and the CLI's modules cost about 90 ms to import, and a raw
Playwright script has its driver booting by then. ``northstar.cli.main`` enters
``early_start`` too, for callers that start there; a second entry is a no-op.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Coroutine, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["early_start", "run_on_loop", "wants_early_driver"]

T = TypeVar("T")

# The commands whose every successful path launches a browser.
EARLY_COMMANDS = frozenset({"run"})
# What the run command needs before its first step, imported while the driver boots.
RUN_MODULES = ("northstar.cli", "northstar.cli.run_commands", "browser_adapters.host")

_loop: asyncio.AbstractEventLoop | None = None


def wants_early_driver(args: Sequence[str]) -> bool:
    """True for ``[global flags] run ...`` unless it only asks for help or the version.

    ``run --queue`` only enqueues (workers run the iterations): it needs no driver.
    """
    command = next((arg for arg in args if not arg.startswith("-")), None)
    asks_only = {"-h", "--help", "--version"} & set(args)
    queued = any(arg == "--queue" or arg.startswith("--queue=") for arg in args)
    return command in EARLY_COMMANDS and not asks_only and not queued


def _import_run_modules() -> None:
    for module in RUN_MODULES:
        importlib.import_module(module)


@contextmanager
def early_start(args: Sequence[str]) -> Iterator[None]:
    """Around the whole command: the loop and early driver for ``args``, closed after."""
    global _loop
    if _loop is not None or not wants_early_driver(args):  # already entered, or not `run`
        yield
        return
    from browser_adapters.early_driver import discard_early, driver_loop, start_early
    from northstar.run.failpoints import STARTUP, failpoint_from_environ

    loop = driver_loop()
    asyncio.set_event_loop(loop)
    _loop = loop
    try:
        start_early(loop)
        loop.run_until_complete(loop.run_in_executor(None, _import_run_modules))
        failpoint_from_environ()(STARTUP, 0)
        yield
    finally:
        _loop = None
        try:
            loop.run_until_complete(discard_early())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def run_on_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the early-start loop if there is one, else on a new driver loop."""
    if _loop is None:
        from browser_adapters.early_driver import driver_loop

        with asyncio.Runner(loop_factory=driver_loop) as runner:
            return runner.run(coroutine)
    return _loop.run_until_complete(coroutine)
