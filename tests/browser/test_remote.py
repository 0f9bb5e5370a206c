"""Remote browsers: ``--cdp-url`` (a running Chromium) and ``--ws-endpoint`` (a Playwright server).

Each test module process starts the remote side for real, on loopback, and stops it: a
Chromium with ``--remote-debugging-port=0`` (its port read from ``DevToolsActivePort`` in
its "DevTools listening" line) and ``playwright run-server --port 0`` (its address
read from its first line). A recipe with an upload runs against the fixture site through
each; the origin gate is checked over both connections; the Chromium we connected to is
still running after the run (a remote browser is never ours to close).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from playwright._impl._driver import compute_driver_executable

from browser_adapters import PlaywrightHost
from browser_adapters.discovery import find_browser
from browser_adapters.remote import shown_url, url_secrets
from fixtures.other_origin import OtherOrigin
from fixtures.site_server import FixtureSite
from northstar.browser.settings import BrowserSettings
from northstar.errors import BrowserClosed, BrowserUnreachable, UsageInvalid
from tests.browser.conftest import LOADED, recipe
from tests.browser.test_origin_guard import assert_blocked_redirect, landing
from tests.cli.test_cli_run import northstar
from tests.conftest import RECIPES, make_plan

STOP_TIMEOUT_S = 10


@dataclass
class RemoteProcess:
    """A process group we started; stopped (and reaped) by ``stop``."""

    process: subprocess.Popen[str]
    address: str
    profile: Path = Path()  # a CDP Chromium's user data dir

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.alive():
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def start_cdp_chromium(profile: Path) -> RemoteProcess:
    """Debian's headless Chromium with a DevTools port the kernel picks."""
    executable = find_browser(None, headless=True)
    assert executable is not None
    args = [
        executable,
        "--headless",
        "--no-sandbox",  # as Playwright launches it: this machine runs tests as root
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        "about:blank",
    ]
    process = subprocess.Popen(
        args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, start_new_session=True
    )
    remote = RemoteProcess(process, "", profile)
    with stopped_on_failure(remote):
        assert process.stderr is not None
        port = None
        for line in process.stderr:  # blocks until Chromium says it listens, or exits
            if found := re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line):
                port = found[1]  # DevToolsActivePort says the same, but may be written later
                break
        process.stderr.close()  # nothing reads it from now on; its writes must not block
        assert port is not None, "Chromium exited before listening"
    remote.address = f"http://127.0.0.1:{port}"
    return remote


@contextmanager
def stopped_on_failure(remote: RemoteProcess) -> Iterator[None]:
    """A process whose start-up failed is stopped before the failure is reported."""
    try:
        yield
    except BaseException:
        remote.stop()
        raise


def start_browser_server() -> RemoteProcess:
    """``playwright run-server`` on loopback; ``--unsafe`` lets a client name the executable."""
    node, cli = compute_driver_executable()
    process = subprocess.Popen(
        [node, cli, "run-server", "--host", "127.0.0.1", "--port", "0", "--unsafe"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    remote = RemoteProcess(process, "")
    with stopped_on_failure(remote):
        assert process.stdout is not None
        match = re.search(r"ws://\S+", process.stdout.readline())
        assert match is not None, "the browser server exited before listening"
    executable = find_browser(None, headless=True)
    options = quote(json.dumps({"executablePath": executable, "headless": True}))
    remote.address = f"{match[0]}?launch-options={options}"
    return remote


@pytest.fixture(scope="module")
def cdp_chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteProcess]:
    remote = start_cdp_chromium(tmp_path_factory.mktemp("cdp-profile"))
    try:
        yield remote
    finally:
        remote.stop()


@pytest.fixture(scope="module")
def browser_server() -> Iterator[RemoteProcess]:
    remote = start_browser_server()
    try:
        yield remote
    finally:
        remote.stop()


@pytest.mark.browser
def test_a_recipe_runs_verified_over_cdp_and_the_browser_stays_up(
    tmp_path: Path, site: FixtureSite, cdp_chromium: RemoteProcess
) -> None:
    proc = northstar(
        "run",
        str(RECIPES / "contact-form.yaml"),
        "--base-url",
        site.base_url,
        "-p",
        "name=Over CDP",
        "--cdp-url",
        cdp_chromium.address,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "iteration 1: verified" in proc.stdout
    (sent,) = site.submissions()
    assert sent["name"] == "Over CDP"
    assert sent["attachment_filename"] == "notes.txt"  # uploaded from this machine's file
    assert sent["attachment_size"] == str((RECIPES / "files" / "notes.txt").stat().st_size)
    assert cdp_chromium.alive()
    active_port = (cdp_chromium.profile / "DevToolsActivePort").read_text().splitlines()[0]
    assert cdp_chromium.address == f"http://127.0.0.1:{active_port}"
    with urllib.request.urlopen(f"{cdp_chromium.address}/json/version", timeout=10) as answer:
        assert "Browser" in json.loads(answer.read())


@pytest.mark.browser
def test_a_recipe_runs_verified_through_a_playwright_browser_server(
    tmp_path: Path, site: FixtureSite, browser_server: RemoteProcess
) -> None:
    proc = northstar(
        "run",
        str(RECIPES / "contact-form.yaml"),
        "--base-url",
        site.base_url,
        "-p",
        "name=Over ws",
        "--ws-endpoint",
        browser_server.address,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "iteration 1: verified" in proc.stdout
    (sent,) = site.submissions()
    assert sent["name"] == "Over ws"
    assert sent["attachment_filename"] == "notes.txt"
    assert browser_server.alive()


async def test_an_unreachable_remote_browser_is_browser_unreachable_without_its_token() -> None:
    settings = BrowserSettings(ws_endpoint="ws://127.0.0.1:9/?token=tok-5e3b-secret")
    with pytest.raises(BrowserUnreachable) as raised:
        async with PlaywrightHost(settings):
            pass
    assert "--ws-endpoint ws://127.0.0.1:9/:" in raised.value.message
    assert "tok-5e3b-secret" not in str(raised.value.to_dict())


@pytest.mark.parametrize("command", ["run", "record", "reconcile", "resume"])
def test_every_command_that_drives_a_browser_takes_the_remote_options(command: str) -> None:
    from northstar.cli import cli

    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "--cdp-url URL" in result.output
    assert "--ws-endpoint URL" in result.output


def test_two_remote_browsers_at_once_are_refused() -> None:
    with pytest.raises(UsageInvalid):
        BrowserSettings(cdp_url="http://127.0.0.1:1", ws_endpoint="ws://127.0.0.1:2/")


def test_a_remote_url_is_shown_without_its_credentials() -> None:
    url = "wss://user:pw-1@browsers.example.test:3000/chromium?token=abc123&x=1"
    assert shown_url(url) == "wss://browsers.example.test:3000/chromium"
    assert {"pw-1", "abc123", url} <= url_secrets(url)
    assert url_secrets("ws://127.0.0.1:3000/") == set()


# The origin gate over a connection: the browser-level CDP session it needs is there.


@pytest.fixture(scope="module", params=["cdp", "ws"])
async def remote_host(
    request: pytest.FixtureRequest, cdp_chromium: RemoteProcess, browser_server: RemoteProcess
) -> AsyncIterator[PlaywrightHost]:
    """A host on the module's CDP Chromium, then on its browser server."""
    if request.param == "cdp":
        settings = BrowserSettings(cdp_url=cdp_chromium.address)
    else:
        settings = BrowserSettings(ws_endpoint=browser_server.address)
    async with PlaywrightHost(settings) as host:
        yield host


@pytest.fixture(scope="module")
def other_server() -> Iterator[OtherOrigin]:
    with OtherOrigin() as server:
        yield server


@pytest.mark.browser
async def test_the_origin_gate_blocks_a_redirect_over_a_remote_connection(
    remote_host: PlaywrightHost, site: FixtureSite, other_server: OtherOrigin
) -> None:
    from northstar.run.runner import ProgramRunner

    other_server.reset()
    start = f"/redirect?to={quote(landing(other_server), safe='')}"
    plan = make_plan(recipe(start, LOADED), base_url=site.base_url)
    result = await ProgramRunner(remote_host).run_iteration(plan)
    assert_blocked_redirect(result, "loaded", other_server)


@pytest.mark.browser
async def test_a_dropped_connection_ends_the_next_call_as_browser_closed(
    site: FixtureSite,
) -> None:
    remote = start_browser_server()
    try:
        async with PlaywrightHost(BrowserSettings(ws_endpoint=remote.address)) as host:
            disconnected = asyncio.Event()
            host.browser.on("disconnected", lambda _browser: disconnected.set())
            os.killpg(remote.process.pid, signal.SIGKILL)  # the server and its browser vanish
            await asyncio.wait_for(disconnected.wait(), timeout=STOP_TIMEOUT_S)
            plan = make_plan(recipe("/form", LOADED), base_url=site.base_url)
            with pytest.raises(BrowserClosed):
                async with host.session(plan):
                    pass
    finally:
        remote.stop()


@pytest.mark.browser
async def test_the_async_api_runs_over_cdp_with_the_cli_journal(
    tmp_path: Path, site: FixtureSite, cdp_chromium: RemoteProcess
) -> None:
    import northstar

    result = await northstar.run(
        RECIPES / "contact-form.yaml",
        params=[{"name": "API row 1"}, {"name": "API row 2"}],
        base_url=site.base_url,
        journal=tmp_path / "journal.db",
        cdp_url=cdp_chromium.address,
    )
    assert result.verified, result.error
    assert [(i.iteration, i.verified) for i in result.iterations] == [(1, True), (2, True)]
    assert [name for _, name, _ in result.outputs] == ["message_id", "confirmation"] * 2
    assert [sent["name"] for sent in site.submissions()] == ["API row 1", "API row 2"]
    assert "credential" not in repr(result)
    assert cdp_chromium.alive()
