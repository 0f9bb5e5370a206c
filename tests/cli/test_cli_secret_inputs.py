"""Secret parameters without the shell history: ``NORTHSTAR_SECRET_<NAME>``, a prompt
without echo at a terminal (a real pseudo-terminal), and a warning for a params file that
others can read. The runs drive real headless Chromium against the fixture site; the
secret holds ``& # % + \\`` and no form of it may appear in the output or any file.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import ENTRY, northstar, one_error_line, write
from tests.core.test_redaction import every_form

TOKEN = "Sx& #1%2F+\\z"
RECIPE = """\
name: secret-inputs
params:
  token: {type: string, secret: true, required: true}
  who: {type: string, required: true}
tabs:
  site: {start: "{{ base_url }}/form"}
steps:
  - {id: name, tab: site, fill: {target: {label: Name}, value: "{{ who }}"}}
  - {id: message, tab: site, fill: {target: {label: Message}, value: "{{ token }}"}}
  - id: send
    tab: site
    click: {target: {role: button, name: Send}}
    effect: submit
    expect:
      - title: {contains: Thank}
"""


def leaks(data: bytes) -> list[str]:
    return [name for name, form in every_form(TOKEN).items() if form.encode() in data]


def written_leaks(tmp_path: Path) -> dict[str, list[str]]:
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".yaml"]
    assert any(p.name.startswith("journal.db") for p in files)
    return {str(p): leaks(p.read_bytes()) for p in files if leaks(p.read_bytes())}


@pytest.mark.browser
def test_a_secret_from_the_environment(tmp_path: Path, site: FixtureSite) -> None:
    recipe = write(tmp_path, "r.yaml", RECIPE)
    run = northstar(
        "-v", "run", str(recipe), "--base-url", site.base_url, "-p", "who=Ada",
        cwd=tmp_path, extra_env={"NORTHSTAR_SECRET_TOKEN": TOKEN},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert site.submissions()[-1]["message"] == TOKEN
    assert leaks((run.stdout + run.stderr).encode()) == []
    assert written_leaks(tmp_path) == {}


def read_until(fd: int, wanted: bytes, deadline: float) -> bytes:
    """Bytes from the terminal until ``wanted`` shows (or the child closes it)."""
    seen = b""
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], deadline - time.monotonic())
        if not ready:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    return seen


@pytest.mark.browser
def test_a_missing_secret_is_asked_for_without_echo(tmp_path: Path, site: FixtureSite) -> None:
    recipe = write(tmp_path, "r.yaml", RECIPE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
    env["NORTHSTAR_JOURNAL"] = str(tmp_path / "journal.db")
    parent, child = pty.openpty()
    args = ["run", str(recipe), "--base-url", site.base_url, "-p", "who=Ada"]
    # A session of its own: no controlling terminal, so getpass uses this pty (stdin).
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, *args], cwd=tmp_path, env=env,
        stdin=child, stdout=child, stderr=child, start_new_session=True,
    )  # fmt: skip
    os.close(child)
    try:
        deadline = time.monotonic() + 60
        shown = read_until(parent, b"token (secret): ", deadline)
        assert b"token (secret): " in shown, shown
        os.write(parent, TOKEN.encode() + b"\n")
        shown += read_until(parent, b"\x00never", deadline)  # everything until it exits
        assert proc.wait(timeout=60) == 0, shown
    finally:
        os.close(parent)
        if proc.poll() is None:
            proc.kill()
    assert site.submissions()[-1]["message"] == TOKEN
    assert leaks(shown) == []  # not echoed, not printed
    assert written_leaks(tmp_path) == {}


def test_without_a_terminal_a_missing_secret_is_param_missing(tmp_path: Path) -> None:
    recipe = write(tmp_path, "r.yaml", RECIPE)
    args = ("run", str(recipe), "--base-url", "http://127.0.0.1:9", "-p", "who=A")
    proc = northstar(*args, cwd=tmp_path)
    assert proc.returncode == 2
    error = one_error_line(proc, "PARAM_MISSING")
    assert "secret parameter 'token' is required" in error["body"]
    assert error["fix"] == "Set NORTHSTAR_SECRET_TOKEN, or run at a terminal to be asked for it."


def test_a_params_file_with_a_secret_others_can_read_is_warned_about(tmp_path: Path) -> None:
    recipe = write(tmp_path, "r.yaml", RECIPE)
    params = write(tmp_path, "p.json", '{"token": "' + TOKEN.replace("\\", "\\\\") + '"}')
    # `who` is missing: the run stops with PARAM_MISSING before any browser starts.
    args = ("run", str(recipe), "--params-file", str(params), "--base-url", "http://127.0.0.1:9")
    params.chmod(0o644)
    shared = northstar(*args, cwd=tmp_path)
    assert shared.returncode == 2
    warning, error = shared.stderr.splitlines()
    assert warning == (
        f"warning: {params} holds secret parameter token and is readable by group or others "
        f"(mode 0644); run `chmod 600 {params}`"
    )
    assert error.startswith("error[PARAM_MISSING]")
    assert leaks((shared.stdout + shared.stderr).encode()) == []
    params.chmod(0o600)
    private = northstar(*args, cwd=tmp_path)
    assert private.returncode == 2
    assert private.stderr.startswith("error[PARAM_MISSING]")
    assert "warning" not in private.stderr
