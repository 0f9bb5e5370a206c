"""Commands run as processes of their own and timed, and what /proc says about them.

Sections (c) to (e) and the single-iteration figures of ``run_bench`` watch the CLI and
the baselines from outside: when a line is printed, when the process exits, how much
memory its driver and Chromium share, and how busy all CPUs were. None of it knows what the
commands are (the suite builds them), so it lives apart from the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import IO

from northstar.bench._workload import BenchFailed

__all__ = [
    "busy_share",
    "cpu_jiffies",
    "descendants",
    "northstar_program",
    "peak_tree_pss",
    "pss_kib",
    "script_command",
    "timed_lines",
    "wall_seconds",
]

SUBPROCESS_TIMEOUT_S = 300
CLI_ENTRY = "from northstar.__main__ import main; main()"
MEMORY_SAMPLE_S = 0.2


def _event_name(line: str) -> str:
    """The ``event`` of a JSON log line, or "" for any other line."""
    try:
        record = json.loads(line)
    except ValueError:
        return ""
    return str(record.get("event", "")) if isinstance(record, dict) else ""


def _arrivals(
    stream: IO[str], wanted: Collection[str], label: Callable[[str], str]
) -> dict[str, float]:
    """``perf_counter()`` at the first line of each wanted label, read as lines arrive."""
    seen: dict[str, float] = {}
    for line in stream:
        now = time.perf_counter()
        name = label(line.strip())
        if name in wanted:
            seen.setdefault(name, now)
        if len(seen) == len(wanted):
            break
    return seen


def timed_lines(
    command: Sequence[str], *, cwd: Path, wanted: Collection[str], on_stderr: bool = False
) -> dict[str, float]:
    """Seconds from spawning ``command`` to its first line of each wanted kind.

    On stderr a line's kind is its JSON log event; on stdout it is the line itself.
    """
    piped, muted = subprocess.PIPE, subprocess.DEVNULL
    started = time.perf_counter()
    with subprocess.Popen(
        command,
        cwd=cwd,
        text=True,
        stdout=muted if on_stderr else piped,
        stderr=piped if on_stderr else muted,
    ) as proc:
        source = proc.stderr if on_stderr else proc.stdout
        assert source is not None
        seen = _arrivals(source, wanted, _event_name if on_stderr else str)
        source.read()  # drained, so the process never blocks on a full pipe
        code = proc.wait(timeout=SUBPROCESS_TIMEOUT_S)
    if code != 0 or len(seen) != len(wanted):
        raise BenchFailed(f"{command[:3]} exited {code} having printed only {sorted(seen)}")
    return {name: at - started for name, at in seen.items()}


def wall_seconds(
    command: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None
) -> float:
    """Seconds from spawning ``command`` to its exit; it must succeed."""
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT_S
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise BenchFailed(f"{command[:3]} exited {done.returncode}: {done.stderr[-500:]}")
    return elapsed


def northstar_program() -> list[str]:
    """The ``northstar`` console script, as a person types it (or the CLI's entry)."""
    script = Path(sys.executable).with_name("northstar")
    return [str(script)] if script.is_file() else [sys.executable, "-c", CLI_ENTRY]


def script_command(module: str, *arguments: str, executable: str) -> list[str]:
    """A hand-written baseline as its own process; naming the browser keeps Northstar out."""
    script = f"fixtures.handwritten.{module}"
    return [sys.executable, "-m", script, *arguments, "--executable", executable]


def _children_by_parent() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it exited while we looked
        parent = int(stat.rpartition(")")[2].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    return children


def descendants(root: int) -> list[int]:
    """Every process below ``root``: the Playwright driver and Chromium's whole tree."""
    children = _children_by_parent()
    found: list[int] = []
    todo = [root]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def pss_kib(pid: int) -> int:
    """Proportional set size: pages shared by several processes are split, so sums add up."""
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in lines if line.startswith("Pss:")), 0)


def peak_tree_pss(proc: subprocess.Popen[bytes]) -> tuple[int, int]:
    """Peak total PSS (KiB) of ``proc``'s descendants until it exits, and their count then."""
    peak, count = 0, 0
    while True:
        try:
            proc.wait(timeout=MEMORY_SAMPLE_S)  # the sampling clock is the wait for its exit
            return peak, count
        except subprocess.TimeoutExpired:
            pids = descendants(proc.pid)
            total = sum(pss_kib(pid) for pid in pids)
            if total > peak:
                peak, count = total, len(pids)


def cpu_jiffies() -> tuple[int, int] | None:
    """(busy, total) time of all CPUs since boot from /proc/stat (Linux), else ``None``."""
    try:
        first = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    values = [int(value) for value in first[1:9]]  # user .. steal
    idle = values[3] + values[4]  # idle and iowait
    return sum(values) - idle, sum(values)


def busy_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    if before is None or after is None or after[1] == before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])
