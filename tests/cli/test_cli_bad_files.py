"""Bad input files, as ``northstar run`` meets them in a process of its own.

Each case must end at once with one coded line (no raw control character in it) and exit
2 (``JOURNAL_ERROR``: exit 9, as documented), without hanging, without spending more than
a few seconds of CPU and without growing the process's memory: a FIFO that would block for
ever and ``/dev/zero`` that never ends are refused before any read. A process still running
after ``HANG_SECONDS`` (a bound far beyond any load, not a speed target) is killed and fails
its exit code; its CPU time, not the wall clock, shows a runaway read on a busy machine. The
process runs under an address-space-free memory cap (``RLIMIT_DATA``) and its peak
resident size is read from ``wait4``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.test_cli_run import ENTRY, ERROR_LINE, northstar, one_error_line

HANG_SECONDS = 120.0  # only a process that blocks for ever gets near this
CPU_SECONDS = 10.0  # the CLI's start-up is about 1 s of CPU; a runaway read is far more
PEAK_RSS_MIB = 400  # the CLI and Playwright's driver together, far below a runaway read
DATA_CAP = 2 << 30  # a runaway read stops here instead of filling the machine

RECIPE = """\
name: bad-files
params:
  title: {type: string, required: true}
  copies: {type: integer, default: 1}
tabs:
  site: {start: "http://127.0.0.1:9/?q={{ title }}"}
steps:
  - {id: open, tab: site, goto: /}
"""


@dataclass
class Finished:
    code: int
    stdout: str
    stderr: str
    seconds: float
    cpu_seconds: float
    peak_rss_mib: float


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (DATA_CAP, DATA_CAP))


def northstar_bounded(*args: str, cwd: Path) -> Finished:
    """Run the CLI in ``cwd``; kill it past the time bound; report its own peak RSS.

    ``wait4`` on this one child gives its resource usage (not that of every child this
    test process ever had); it waits in a thread so the time bound holds.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
    env["NORTHSTAR_JOURNAL"] = str(cwd / "journal.db")
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    started = time.monotonic()
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-c", ENTRY, *args],
            cwd=cwd,
            env=env,
            stdout=stdout,
            stderr=stderr,
            preexec_fn=_cap_memory,
        )
    waited: list[tuple[int, int, resource.struct_rusage]] = []
    waiter = threading.Thread(target=lambda: waited.append(os.wait4(proc.pid, 0)))
    waiter.start()
    waiter.join(timeout=HANG_SECONDS)
    if waiter.is_alive():
        proc.kill()
        waiter.join()
    seconds = time.monotonic() - started
    _, status, usage = waited[0]
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return Finished(
        proc.returncode,
        out.read_text(),
        err.read_text(),
        seconds,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
    )


def assert_one_coded_line(done: Finished, code: str, exit_code: int = 2) -> str:
    assert done.cpu_seconds < CPU_SECONDS, done
    assert done.peak_rss_mib < PEAK_RSS_MIB, done
    assert "Traceback" not in done.stdout + done.stderr
    assert done.code == exit_code, done
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    match = ERROR_LINE.match(lines[0])
    assert match is not None, lines[0]
    assert match["code"] == code, lines[0]
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in lines[0]), lines[0]
    return lines[0]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


def dev_zero(folder: Path, name: str) -> Path:
    path = folder / name
    path.symlink_to("/dev/zero")
    return path


def directory(folder: Path, name: str) -> Path:
    path = folder / name
    path.mkdir()
    return path


Maker = Callable[[Path, str], Path]


@pytest.mark.parametrize(
    ("make", "kind"), [(fifo, "FIFO"), (dev_zero, "character device"), (directory, "directory")]
)
def test_a_recipe_that_is_no_regular_file(tmp_path: Path, make: Maker, kind: str) -> None:
    recipe = make(tmp_path, "recipe.yaml")
    line = assert_one_coded_line(
        northstar_bounded("run", str(recipe), cwd=tmp_path), "RECIPE_INVALID"
    )
    assert kind in line


@pytest.mark.parametrize(
    ("make", "kind"), [(fifo, "FIFO"), (dev_zero, "character device"), (directory, "directory")]
)
def test_a_params_file_that_is_no_regular_file(tmp_path: Path, make: Maker, kind: str) -> None:
    recipe = write(tmp_path, "recipe.yaml", RECIPE)
    rows = make(tmp_path, "rows.csv")
    done = northstar_bounded("run", str(recipe), "--params-file", str(rows), cwd=tmp_path)
    assert kind in assert_one_coded_line(done, "USAGE_INVALID")


def test_a_csv_field_over_128_kib_is_read_and_its_rows_validated(tmp_path: Path) -> None:
    recipe = write(tmp_path, "recipe.yaml", RECIPE)
    # Row 1 holds a 200 KiB title; row 2 lacks the title, so the run stops at validation.
    rows = write(tmp_path, "rows.csv", f"title,copies\n{'x' * 200 * 1024},1\n,2\n")
    done = northstar_bounded("run", str(recipe), "--params-file", str(rows), cwd=tmp_path)
    assert "row 2: parameter 'title' is required" in assert_one_coded_line(done, "PARAM_MISSING")


@pytest.mark.parametrize(
    ("name", "text", "code", "says"),
    [
        ("rows.csv", "title,copies\nA," + "9" * 5000 + "\n", "PARAM_INVALID", "4300 digits"),
        ("rows.json", '{"title": "A", "copies": ' + "9" * 5000 + "}", "USAGE_INVALID", "too long"),
        ("rows.json", '{"title": ' + "[" * 100_000 + "]" * 100_000 + "}", "USAGE_INVALID", "deep"),
    ],
)
def test_numbers_and_nesting_past_the_limits(
    tmp_path: Path, name: str, text: str, code: str, says: str
) -> None:
    recipe = write(tmp_path, "recipe.yaml", RECIPE)
    rows = write(tmp_path, name, text)
    done = northstar_bounded("run", str(recipe), "--params-file", str(rows), cwd=tmp_path)
    line = assert_one_coded_line(done, code)
    assert says in line
    assert len(line) < 400


def test_a_line_separator_inside_a_csv_value_keeps_one_row(tmp_path: Path) -> None:
    recipe = write(tmp_path, "recipe.yaml", RECIPE)
    rows = write(tmp_path, "rows.csv", "title\nbefore\u2028after\n")
    # Asking for two iterations of a one-row file is refused, naming how many rows it has.
    done = northstar_bounded(
        "run", str(recipe), "--params-file", str(rows), "--repeat", "2", cwd=tmp_path
    )
    assert "the 1 rows" in assert_one_coded_line(done, "USAGE_INVALID")


def test_a_journal_truncated_to_nothing_is_a_journal_error(tmp_path: Path) -> None:
    recipe = write(tmp_path, "recipe.yaml", RECIPE)
    (tmp_path / "journal.db").write_bytes(b"")
    done = northstar_bounded("run", str(recipe), "-p", "title=A", cwd=tmp_path)
    assert "is empty" in assert_one_coded_line(done, "JOURNAL_ERROR", exit_code=9)
    assert (tmp_path / "journal.db").read_bytes() == b""


def test_reading_commands_refuse_a_truncated_journal_too(tmp_path: Path) -> None:
    (tmp_path / "journal.db").write_bytes(b"")
    done = northstar_bounded("runs", "--json", cwd=tmp_path)
    assert_one_coded_line(done, "JOURNAL_ERROR", exit_code=9)
    assert json.loads(done.stdout or "null") is None


# Not bounded in time: a hang here fails by the subprocess timeout, not by a stopwatch.


@pytest.mark.parametrize(
    ("make", "kind", "command"),
    [
        (fifo, "a FIFO", "runs"),
        (dev_zero, "a device", "runs"),
        (directory, "a directory", "runs"),
        (directory, "a directory", "run"),
    ],
)
def test_a_journal_that_is_no_regular_file_is_a_journal_error_at_once(
    tmp_path: Path, make: Maker, kind: str, command: str
) -> None:
    """A FIFO used to block `run` in open() for ever, deaf to SIGTERM (its `run` case is in
    tests/cli/test_run_endings.py); the readers called it "no journal"."""
    recipe = write(tmp_path, "recipe.yaml", RECIPE)
    make(tmp_path, "journal.db")
    args = ("run", str(recipe), "-p", "title=A") if command == "run" else ("runs",)
    proc = northstar(*args, cwd=tmp_path, timeout=60)
    assert proc.returncode == 9
    assert f"not a regular file ({kind})" in one_error_line(proc, "JOURNAL_ERROR")["body"]


@pytest.mark.parametrize(
    ("name", "text", "code", "says"),
    [
        ("rows.csv", "title\nA\x00B\n", "USAGE_INVALID", "line 2 holds a NUL byte"),
        ("rows\x1b[2J\r.txt", "title\nA\n", "USAGE_INVALID", "rows\\x1b[2J\\x0d.txt"),
    ],
)
def test_a_params_file_refused_is_one_line_with_no_control_character(
    tmp_path: Path, name: str, text: str, code: str, says: str
) -> None:
    """The other refused files are in tests/run/test_inputs.py, without a process."""
    recipe = write(tmp_path, "recipe.yaml", RECIPE)
    rows = write(tmp_path, name, text)
    proc = northstar("run", str(recipe), "--params-file", str(rows), cwd=tmp_path, timeout=60)
    assert proc.returncode == 2
    line = one_error_line(proc, code)[0]
    assert says in line
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in line), line
