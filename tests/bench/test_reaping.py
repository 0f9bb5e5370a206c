"""The bench counts processes that outlive their parent (Chromium's, after the browser)."""

from __future__ import annotations

import subprocess
import sys

import pytest

# In a process of its own: a subreaper pytest would collect every other test's orphans.
_PROGRAM = """
import os, resource, subprocess
from northstar.bench._reaping import become_subreaper, children, reap_orphans
assert become_subreaper()
keep = children()
def cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
before = cpu()
# The parent exits at once; its child burns CPU for a moment as an orphan.
busy = "import time; end = time.process_time() + 0.3\\nwhile time.process_time() < end: pass"
script = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {busy!r}])"
subprocess.run([os.sys.executable, "-c", script], check=True)
orphans = children() - keep
reap_orphans(keep)
counted = cpu() - before
print(len(orphans), children() - keep == set(), round(counted, 2))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_an_orphaned_grandchild_is_reaped_and_its_cpu_counted() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM], capture_output=True, text=True, check=True, timeout=60
    )
    orphans, none_left, counted = done.stdout.split()
    assert orphans == "1"  # the grandchild came back to us
    assert none_left == "True"
    assert float(counted) >= 0.25  # its 0.3 s of CPU is in RUSAGE_CHILDREN
