"""Following a live run from another process, for ``northstar watch``.

It only re-reads the journal; the wait between reads is passed in, so this loop never
sleeps and a test can drive it step by step.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable

from northstar.readers.liveness import Liveness, pid_alive
from northstar.readers.queries import get_run
from northstar.readers.views import RunDetail

__all__ = ["follow_run"]


async def follow_run(
    path: str | os.PathLike[str],
    run_id: str,
    *,
    poll: Callable[[], Awaitable[None] | None],
    on_change: Callable[[RunDetail], None],
    is_alive: Liveness = pid_alive,
    read: Callable[..., RunDetail] = get_run,
) -> RunDetail:
    """Report every change of the run to ``on_change`` until its status is final.

    ``poll`` is the wait between reads (the CLI passes a 0.5 s sleep; tests pass a
    function that advances a writer), so this loop itself never sleeps. ``read`` is how
    the run is read each time (``readers.bounded.window_reader`` reads only what may have
    changed since the last poll).
    """
    last: RunDetail | None = None
    while True:
        detail = read(path, run_id, is_alive=is_alive)
        if detail != last:
            on_change(detail)
            last = detail
        if detail.is_final:
            return detail
        waited = poll()
        if inspect.isawaitable(waited):
            await waited
