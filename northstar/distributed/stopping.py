"""A worker's exit: its codes, and a deadline that holds whatever the database does.

A stop request (SIGTERM, Ctrl-C) or the worker's own end (it gave up on its database)
arms ``StopDeadline``. The worker then drains in order: the lanes finish their step and
journal it, DBOS is shut down, the browser closed. Whatever is still running when the
deadline passes (a step that does not end, a database that hangs, DBOS's threads blocked
on it) does not keep the process: a thread of its own ends it with ``os._exit``, and an
iteration still in progress is left to recovery exactly as a SIGKILL would leave it (the
journal holds only whole statements; the next worker or this one restarted under the same
``--name`` claims it again and the journal decides).

The deadline runs on its own thread, armed from the signal handler, so neither a blocked
event loop nor a thread DBOS cannot stop delays it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

from northstar.errors import InputError, JournalUnavailable, NorthstarError

__all__ = ["EXIT_CODES", "StopDeadline", "exit_code_for_error"]

EXIT_CODES = {
    "stopped": 0,  # stopped when told, every iteration it had taken settled and journaled
    "error": 1,  # a worker error (JOURNAL_ERROR, ...): see its one coded line
    "bad_input": 2,  # bad options, or another live worker has this --name
    "left_to_recovery": 130,  # stopped with iterations left in progress, for recovery
    "journal_unavailable": 75,  # the database did not answer within the bound (EX_TEMPFAIL)
}


def exit_code_for_error(error: NorthstarError) -> int:
    """A worker that ends on an error: waiting may help (75), the options are wrong (2), or 1."""
    if isinstance(error, JournalUnavailable):
        return EXIT_CODES["journal_unavailable"]
    if isinstance(error, InputError):
        return EXIT_CODES["bad_input"]
    return EXIT_CODES["error"]


class StopDeadline:
    """Ends the process ``seconds`` after ``arm()``, unless ``done()`` came first."""

    def __init__(
        self,
        seconds: float,
        exit_code: Callable[[], int],
        *,
        on_expiry: Callable[[int], None] = lambda code: None,
        end_process: Callable[[int], None] = os._exit,
    ) -> None:
        self.seconds = seconds
        self._exit_code = exit_code
        self._on_expiry = on_expiry  # a last line for the person reading the log
        self._end_process = end_process
        self._armed = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="northstar-stop-deadline")
        self._thread.daemon = True

    def start(self) -> StopDeadline:
        self._thread.start()
        return self

    def arm(self) -> None:
        """Safe in a signal handler: it only sets an event."""
        self._armed.set()

    def done(self) -> None:
        self._done.set()
        self._armed.set()  # let the thread end

    def _watch(self) -> None:
        self._armed.wait()
        if self._done.wait(self.seconds):
            return
        code = self._exit_code()
        self._on_expiry(code)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        self._end_process(code)
