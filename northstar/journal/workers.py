"""Whether the worker a journal row names still lives: a probe that sends nothing.

The journal records each run's worker (pid and host). The readers show a ``running`` run
whose worker is gone as ``interrupted``; ``reconcile`` refuses to decide a run whose
worker is still alive. Both ask this one probe; it imports nothing, so a reader may use it.
"""

from __future__ import annotations

import os

__all__ = ["pid_alive"]


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists on this host (signal 0 probes, sends nothing)."""
    if pid <= 0:
        return False  # 0 and negatives address process groups, never one worker
    if os.name == "nt":
        return True  # os.kill would terminate it on Windows; we cannot tell, so assume alive
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True
