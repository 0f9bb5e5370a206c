"""``run --step`` at a terminal: each recipe step is shown before it runs.

The command runs in a pseudo-terminal (Python's ``pty``), as a person would run it. The
Inspector is replaced by a person who presses Enter at the terminal to resume (the
browser stays headless: there is no display here); everything else is the real command.
While the run waits before the submitting step, the fixture site has received nothing.
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
from tests.cli.test_cli_recovery import HELD_POST
from tests.cli.test_cli_run import northstar, one_error_line, write

pytestmark = pytest.mark.browser

RECIPE = HELD_POST  # a title, then a submission the site counts

# The person at the terminal: each pause waits for a line on stdin, then resumes.
PERSON_ENTRY = """
import asyncio, dataclasses, sys
import browser_adapters.run_hooks as run_hooks
import northstar.cli.run_commands as run_commands

async def person(page, point):
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)

run_hooks.inspector_pause = person
chosen = run_commands.browser_settings
run_commands.browser_settings = lambda o: dataclasses.replace(chosen(o), headless=True)
from northstar.__main__ import main
main()
"""
DEADLINE_S = 120.0  # a bound for a stuck child, not a budget the test relies on


class Terminal:
    """The master side of a pty the command runs in: read what it shows, type into it."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.master, child = pty.openpty()
        env = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
        env["NORTHSTAR_JOURNAL"] = str(cwd / "journal.db")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", PERSON_ENTRY, *args],
            cwd=cwd,
            env=env,
            stdin=child,
            stdout=child,
            stderr=child,
            start_new_session=True,
        )
        os.close(child)
        self.shown = ""

    def wait_for(self, text: str) -> str:
        """Everything shown up to and including ``text`` (or fail when the command ends)."""
        end = time.monotonic() + DEADLINE_S
        while text not in self.shown:
            ready, _, _ = select.select([self.master], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                raise AssertionError(f"{text!r} never shown; shown so far:\n{self.shown}")
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the child closed the terminal: it ended
                chunk = b""
            if not chunk:
                raise AssertionError(f"ended before showing {text!r}:\n{self.shown}")
            self.shown += chunk.decode(errors="replace").replace("\r\n", "\n")
        return self.shown

    def press_enter(self) -> None:
        os.write(self.master, b"\n")

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=DEADLINE_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            os.close(self.master)


def test_step_shows_each_recipe_step_in_the_terminal_before_it_runs(
    tmp_path: Path, site: FixtureSite
) -> None:
    recipe = write(tmp_path, "held-post.yaml", RECIPE)
    lines = RECIPE.splitlines()
    args = ["run", str(recipe), "-p", "title=Stepped", "--base-url", site.base_url, "--step"]
    terminal = Terminal(args, tmp_path)
    try:
        shown = terminal.wait_for("paused before step title")
        terminal.wait_for("resume:")
        assert '  fill label "Title"\n' in terminal.shown
        assert f"  at {recipe}:{lines.index('  - id: title') + 1}\n" in terminal.shown
        terminal.press_enter()

        shown = terminal.wait_for("paused before step publish")
        terminal.wait_for("resume:")
        assert '  click button "Publish"\n' in terminal.shown
        assert f"  at {recipe}:{lines.index('  - id: publish') + 1}\n" in terminal.shown
        assert site.submission_count() == 0  # shown before the step ran: nothing sent yet
        terminal.press_enter()
        terminal.wait_for("verified")
    finally:
        code = terminal.close()
    assert code == 0, terminal.shown
    assert site.submission_count() == 1
    assert shown.index("paused before step title") < shown.index("paused before step publish")


def test_break_at_a_step_the_recipe_does_not_have_is_refused_before_anything_starts(
    tmp_path: Path,
) -> None:
    recipe = write(tmp_path, "held-post.yaml", RECIPE)
    proc = northstar(
        "run", str(recipe), "-p", "title=x", "--base-url", "http://127.0.0.1:9",
        "--break-at", "publsh", cwd=tmp_path,
    )  # fmt: skip
    match = one_error_line(proc, "USAGE_INVALID")
    assert "--break-at publsh" in match["body"]
    assert "title, publish" in match["fix"]
    assert not (tmp_path / "journal.db").exists()
