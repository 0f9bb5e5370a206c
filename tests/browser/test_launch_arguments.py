"""How pytest-playwright's launch options (``BrowserSettings.launch_options``) reach a launch."""

from __future__ import annotations

from browser_adapters.host import _QUIET_ARGS, launch_arguments
from northstar.browser.settings import BrowserSettings


def test_without_launch_options_the_settings_decide() -> None:
    settings = BrowserSettings(headless=False, slow_mo_ms=50, extra_args=("--lang=fr",))
    assert launch_arguments(settings, "/usr/bin/chromium") == {
        "executable_path": "/usr/bin/chromium",
        "headless": False,
        "slow_mo": 50,
        "args": [*_QUIET_ARGS, "--lang=fr"],
    }


def test_launch_options_win_and_their_args_come_last() -> None:
    given = {"executable_path": "/opt/chrome", "slow_mo": 7, "args": ["--user-agent=X"]}
    settings = BrowserSettings(extra_args=("--lang=fr",), launch_options=given)
    arguments = launch_arguments(settings, "/opt/chrome")
    assert arguments["executable_path"] == "/opt/chrome"
    assert arguments["slow_mo"] == 7
    assert arguments["args"] == [*_QUIET_ARGS, "--lang=fr", "--user-agent=X"]


def test_a_channel_is_passed_on_with_no_discovered_executable() -> None:
    settings = BrowserSettings(launch_options={"channel": "chrome", "headless": True})
    arguments = launch_arguments(settings, None)
    assert arguments["channel"] == "chrome"
    assert arguments["executable_path"] is None
