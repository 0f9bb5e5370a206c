"""Counting Chromium's whole process tree: orphans come back to the bench to be reaped.

``getrusage(RUSAGE_CHILDREN)`` counts a process only once its parent reaped it. The
Playwright driver reaps Chromium's browser process, but the browser's own children (the
zygote, renderers, the GPU and network processes) can outlive it by a moment; orphaned,
they went to init, and their CPU was never counted. The first tree figures of section (a)
read 185 ms per iteration for Northstar against 209 ms for the one-page script, which
cannot be. As a child subreaper (Linux ``prctl``) the bench gets those orphans back and
reaps them inside the measurement: the same runs then read 570 against 341 ms.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["become_subreaper", "children", "reap_orphans"]

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    answer: int = ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    return answer == 0


def children() -> set[int]:
    """This process's children now (from ``/proc``; empty where there is none)."""
    me, found = os.getpid(), set[int]()
    if not os.path.isdir("/proc"):
        return found
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _parent(entry) == me:
            found.add(int(entry))
    return found


def _parent(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def reap_orphans(keep: set[int]) -> None:
    """Wait for and reap every child not in ``keep``: Chromium's processes, reparented here.

    Each was orphaned by a browser that closed, so it is already on its way out; waiting
    on it is waiting for that exit, not a pause.
    """
    for pid in children() - keep:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:  # reaped by its own watcher meanwhile
            continue
