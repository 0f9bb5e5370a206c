"""Ctrl-C and SIGTERM as a request to stop, from a command's first line to its last.

Python's default turns SIGINT into ``KeyboardInterrupt`` wherever the main thread is at
that moment (an import, a journal write, a Playwright call), which is how a Ctrl-C used
to end in a traceback. The commands that start or continue runs (``run``, ``resume``)
call ``catch_stop_signals`` first: from then on either signal only records a request and
tells whoever listens (``on_stop_request``): the run's ``StopSignal``, on its event loop.
A request that comes before anyone listens (during start-up) is kept and delivered when
the run starts listening, so the run stops before its first iteration.

A second Ctrl-C is the same request again: it never cuts a step short, because every
wait inside a step is bounded by the step's timeout and a pause ends at the first one.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from types import FrameType

__all__ = [
    "STOPPABLE_COMMANDS",
    "STOP_SIGNALS",
    "catch_stop_signals",
    "catch_stop_signals_for",
    "on_stop_request",
    "stop_requested",
]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# The commands whose runs stop cleanly on a request; the others keep Python's default.
STOPPABLE_COMMANDS = frozenset({"run", "resume"})

_requested = False
_catching = False
_listeners: list[Callable[[], None]] = []


def stop_requested() -> bool:
    """Whether a stop signal came since ``catch_stop_signals`` was entered."""
    return _requested


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _requested
    _requested = True
    for listener in list(_listeners):
        listener()


@contextmanager
def catch_stop_signals() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM are stop requests; nested entries are no-ops.

    Only the main thread may install signal handlers; elsewhere this does nothing.
    """
    global _catching, _requested
    if _catching or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    _catching, _requested = True, False
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_signal)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _catching = False


def catch_stop_signals_for(args: Sequence[str]) -> contextlib.AbstractContextManager[None]:
    """``catch_stop_signals`` for ``[global flags] run|resume ...``, else nothing."""
    command = next((arg for arg in args if not arg.startswith("-")), None)
    return catch_stop_signals() if command in STOPPABLE_COMMANDS else nullcontext()


@contextmanager
def on_stop_request(listener: Callable[[], None]) -> Iterator[None]:
    """Call ``listener`` at each stop request in the block, and at once if one came already.

    It runs inside a signal handler: it must only hand the request on (for example with
    ``loop.call_soon_threadsafe``), never do the work itself.
    """
    _listeners.append(listener)
    try:
        if _requested:
            listener()
        yield
    finally:
        _listeners.remove(listener)
