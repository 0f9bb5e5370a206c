"""Whether a ``running`` run still has its worker: plain decisions, with the probe injected.

A run or iteration the journal still calls ``running`` whose worker process is gone is
shown as ``interrupted``: a worker that exited without recording a result did not verify
anything. Liveness is checked with ``os.kill(pid, 0)`` for workers on this host only;
elsewhere the recorded state is shown as it is. A pid reused by an unrelated process reads
as alive: the mistake errs towards "still running", never towards "verified".

A distributed run (queued with ``run --queue``: its ``run_queued`` event names the
queue, and no local ``resume`` took it over since) is never judged by a pid: the pid is
only that of the last worker that claimed an iteration, and when it dies another worker
(or a restarted one) takes its iterations over. Such a run is running until the journal
records it settled (the lane that settles its last iteration, or blocks it, ends it).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from typing import Any

from northstar.journal.workers import pid_alive

__all__ = [
    "INTERRUPTED",
    "Liveness",
    "effective_state",
    "effective_status",
    "pid_alive",
    "queue_of",
    "worker_gone",
]

INTERRUPTED = "interrupted"

Liveness = Callable[[int], bool]


def queue_of(payload: Mapping[str, Any]) -> str | None:
    """The queue named by a run's last ``run_queued`` event; ``None`` for any other payload."""
    queue = payload.get("queue")
    return queue if isinstance(queue, str) and queue else None


def worker_gone(
    pid: int | None, host: str | None, is_alive: Liveness, *, queue: str | None = None
) -> bool:
    if queue is not None:
        return False  # many workers serve a queued run: only the journal says it ended
    if pid is None or host != socket.gethostname():
        return False  # a worker elsewhere cannot be probed; trust the record
    return not is_alive(pid)


def effective_status(status: str, gone: bool) -> str:
    return INTERRUPTED if status == "running" and gone else status


def effective_state(state: str, run_status: str) -> str:
    """An iteration left running by a run that is no longer running was interrupted."""
    if state in ("pending", "running") and run_status != "running":
        return INTERRUPTED
    return state
