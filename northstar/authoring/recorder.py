"""Start Playwright's own recorder (``playwright codegen``) and hand its script on.

``recorder_command`` is the pure part: the argv and the environment. The recorder runs
with the same Python (``python -m playwright``), writes ``--target python-async`` to the
given file, and drives the Chromium that Northstar's browser discovery found: codegen
has no ``--executable-path`` option, and the environment variable its CLI reads for one
(``PWTEST_CLI_EXECUTABLE_PATH``) is set when the executable is not Playwright's own build
(``None``). ``record`` runs it through an injected runner and returns the script text.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from northstar.errors import UsageInvalid

__all__ = ["EXECUTABLE_ENV", "RecorderCommand", "record", "recorder_command", "run_process"]

EXECUTABLE_ENV = "PWTEST_CLI_EXECUTABLE_PATH"
Runner = Callable[[Sequence[str], Mapping[str, str]], int]


@dataclass(frozen=True, slots=True)
class RecorderCommand:
    argv: tuple[str, ...]
    env: dict[str, str]


def recorder_command(
    url: str,
    output: Path,
    *,
    executable: str | None,
    environ: Mapping[str, str],
    python: str = sys.executable,
) -> RecorderCommand:
    """The recorder's argv and environment for ``url``, writing the script to ``output``."""
    argv = (
        python, "-m", "playwright", "codegen",
        "--target", "python-async",
        "--browser", "chromium",
        "-o", str(output),
        url,
    )  # fmt: skip
    env = dict(environ)
    if executable is not None:
        env[EXECUTABLE_ENV] = executable
    return RecorderCommand(argv, env)


def run_process(argv: Sequence[str], env: Mapping[str, str]) -> int:
    """The recorder as a child process; it returns when the person closes its window."""
    return subprocess.run(list(argv), env=dict(env), check=False).returncode


def record(command: RecorderCommand, output: Path, runner: Runner = run_process) -> str:
    """Run the recorder and return the script it left (an error if it left none)."""
    code = runner(command.argv, command.env)
    if not output.is_file() or not output.read_text(encoding="utf-8").strip():
        raise UsageInvalid(
            f"the recorder exited ({code}) without writing a script",
            fix="Record at least one action, then close the recorder's browser window.",
        )
    return output.read_text(encoding="utf-8")
