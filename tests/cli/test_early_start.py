"""``northstar run`` boots Playwright's driver while it imports and checks its input.

The driver must be taken by the run's browser host, and stopped (never left behind) when
the input turns out bad; the bad input is still one error line with exit code 2.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import browser_adapters.early_driver as early_driver
from browser_adapters import PlaywrightHost
from fixtures.site_server import FixtureSite
from northstar._early_start import wants_early_driver
from tests.cli.test_cli_run import northstar, one_error_line
from tests.conftest import RECIPES

MARK = "NORTHSTAR_TEST_EARLY_MARK"


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (["run", "recipe.yaml"], True),
        (["-v", "--log-json", "run", "recipe.yaml", "--repeat", "3"], True),
        (["run", "--help"], False),
        (["--version"], False),
        (["validate", "recipe.yaml"], False),
        (["runs"], False),
        ([], False),
    ],
)
def test_only_a_run_starts_the_driver_early(args: list[str], wanted: bool) -> None:
    assert wants_early_driver(args) is wanted


def marked_processes(mark: str) -> list[int]:
    """Live processes whose environment carries ``mark`` (the CLI and whatever it spawned)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue  # gone, or not ours to read
        if f"{MARK}={mark}".encode() in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def northstar_marked(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """The CLI run with a fresh mark in its environment, inherited by all it spawns."""
    mark = uuid.uuid4().hex
    return northstar(*args, cwd=cwd, extra_env={MARK: mark}), mark


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
def test_bad_input_stops_the_early_driver_and_launches_no_browser(tmp_path: Path) -> None:
    proc, mark = northstar_marked("run", str(RECIPES / "contact-form.yaml"), cwd=tmp_path)
    assert proc.returncode == 2
    one_error_line(proc, "PARAM_MISSING")
    assert marked_processes(mark) == []  # the driver exited with the command
    assert not (tmp_path / "journal.db").exists()  # nothing was started


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
def test_a_run_with_the_early_driver_leaves_nothing_running(
    tmp_path: Path, site: FixtureSite
) -> None:
    before = site.submission_count("contact")
    proc, mark = northstar_marked(
        "run",
        str(RECIPES / "contact-form.yaml"),
        "-p",
        "name=Early Start",
        "--base-url",
        site.base_url,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert site.submission_count("contact") == before + 1
    assert marked_processes(mark) == []


def test_the_first_host_on_the_loop_takes_the_early_driver(site: FixtureSite) -> None:
    """In one process: the host launches its browser on the driver started early."""
    loop = asyncio.new_event_loop()
    try:
        early_driver.start_early(loop)

        async def first_page_title() -> str:
            async with PlaywrightHost() as host:
                assert early_driver._pending is None  # taken, so this host owns it
                page = await host.browser.new_page()
                await page.goto(f"{site.base_url}/form")
                return await page.title()

        assert loop.run_until_complete(first_page_title())
        loop.run_until_complete(early_driver.discard_early())  # nothing left to discard
    finally:
        loop.close()


def test_an_untaken_early_driver_is_stopped() -> None:
    loop = asyncio.new_event_loop()
    try:
        early_driver.start_early(loop)
        task = early_driver._pending
        assert task is not None
        loop.run_until_complete(early_driver.discard_early())
        playwright = task.result()
        with pytest.raises(Exception, match=r"closed|stopped|Connection"):
            loop.run_until_complete(playwright.chromium.launch())
        assert early_driver._pending is None
    finally:
        loop.close()


def test_the_command_starts_the_driver_before_it_imports_the_cli(tmp_path: Path) -> None:
    """The console script's module starts the driver first; click and the CLI load after."""
    probe = (
        "import sys\n"
        "import browser_adapters.early_driver as early\n"
        "start = early.start_early\n"
        "def noting(loop):\n"
        "    print('cli loaded at driver start:', 'northstar.cli' in sys.modules)\n"
        "    start(loop)\n"
        "early.start_early = noting\n"
        "from northstar.__main__ import main\n"
        f"main(['run', {str(RECIPES / 'contact-form.yaml')!r}])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.splitlines() == ["cli loaded at driver start: False"]
    one_error_line(proc, "PARAM_MISSING")  # and the command went on to check its input
