"""Each expected failure arrives as a stable code with a message a person can act on.

Browser failures are recorded in the iteration result (the runner never raises them);
input failures (parameters) are raised while binding, before any browser starts; a missing
browser is raised when the host starts.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

from browser_adapters import PlaywrightHost, find_browser
from browser_adapters.discovery import BROWSER_ENV
from browser_adapters.error_mapping import _unreachable
from fixtures.site_server import FixtureSite
from northstar.browser.settings import BrowserSettings
from northstar.errors import BrowserNotFound, ParamInvalid, ParamMissing, TargetAmbiguous
from northstar.recipe.model import Check, Target, TextCheck
from northstar.results import IterationState
from northstar.run.runner import ProgramRunner
from tests.browser.conftest import (
    EVENT_MS,
    FAIL_FAST_MS,
    LOADED,
    RunText,
    last_step,
    recipe,
    serialized,
)
from tests.conftest import make_plan

pytestmark = pytest.mark.browser


def failing(step: str, *, start: str, params: str = "") -> str:
    """A recipe that opens ``start`` and then runs one step with a short timeout."""
    return recipe(start, LOADED + step.replace("TIMEOUT", str(FAIL_FAST_MS)), params=params)


# TARGET_MISSING / TARGET_AMBIGUOUS


async def test_target_missing_names_what_was_looked_for(run_text: RunText) -> None:
    result = await run_text(
        failing(
            """
- id: launch
  tab: site
  timeout: TIMEOUT
  click: {target: {role: button, name: Launch rockets, exact: true}}
""",
            start="/menu",
        )
    )
    assert result.state is IterationState.FAILED
    assert (result.reason_code, result.failing_step) == ("TARGET_MISSING", "launch")
    assert 'no element matches button "Launch rockets" (waited' in (result.reason or "")
    error = last_step(result).error
    assert error is not None
    assert "Check the target" in error["fix"]


async def test_target_missing_inside_a_scope_names_the_scope(run_text: RunText) -> None:
    result = await run_text(
        failing(
            """
- id: scoped
  tab: site
  timeout: TIMEOUT
  click: {target: {role: button, name: Delete, within: {role: navigation, name: Main}}}
""",
            start="/menu",
        )
    )
    assert result.reason_code == "TARGET_MISSING"
    assert 'button "Delete" within navigation "Main"' in (result.reason or "")


async def test_target_ambiguous_names_the_candidates(run_text: RunText) -> None:
    result = await run_text(
        failing(
            """
- id: delete
  tab: site
  timeout: TIMEOUT
  click: {target: {role: button, name: Delete}}
""",
            start="/menu",
        )
    )
    assert (result.reason_code, result.failing_step) == ("TARGET_AMBIGUOUS", "delete")
    reason = result.reason or ""
    assert reason.startswith('2 elements match button "Delete"')
    assert reason.count('button "Delete"') == 3  # what was looked for, then both candidates
    error = last_step(result).error
    assert error is not None
    assert "within" in error["fix"]


async def test_an_ambiguous_target_is_never_acted_on(host: Any, site: FixtureSite) -> None:
    """The adapter does not click "something close": after the refusal, nothing was deleted."""
    text = recipe(
        "/menu", "- {id: delete, tab: site, click: {target: {role: button, name: Delete}}}"
    )
    plan = make_plan(text, base_url=site.base_url)
    deleted = Check(text=TextCheck(target=Target(css="#deleted"), equals=""))
    async with host.session(plan) as session:
        await session.open_tab(plan.tabs["site"], timeout_ms=EVENT_MS)
        with pytest.raises(TargetAmbiguous):
            await session.perform(plan.step("delete"))
        await session.check(deleted, tab="site", timeout_ms=EVENT_MS)


async def test_an_ambiguous_submit_is_refused_before_its_in_flight_record(
    run_text: RunText,
) -> None:
    """A submitting step resolves its target first: two matches, nothing recorded or sent."""
    result = await run_text(
        failing(
            """
- id: delete
  tab: site
  timeout: TIMEOUT
  click: {target: {role: button, name: Delete}}
  effect: submit
  expect:
    - text: {target: {css: "#deleted"}, contains: Deleted}
""",
            start="/menu",
        )
    )
    assert (result.reason_code, result.failing_step) == ("TARGET_AMBIGUOUS", "delete")
    assert (result.reason or "").startswith('2 elements match button "Delete"')
    assert result.state is IterationState.FAILED  # not unknown: nothing was dispatched


async def test_an_output_read_from_an_ambiguous_target_names_the_candidates(
    run_text: RunText,
) -> None:
    result = await run_text(
        recipe(
            "/menu",
            LOADED,
            tail="""
            outputs:
              draft: {tab: site, from: text, target: {role: button, name: Delete}}
            """,
        )
    )
    assert result.reason_code == "TARGET_AMBIGUOUS"
    assert (result.reason or "").startswith('2 elements match button "Delete"')


async def test_a_narrowed_target_is_acted_on(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/menu",
            """
            - id: delete-b
              tab: site
              click: {target: {role: button, name: Delete, within: {text: Draft B, exact: false}}}
              expect:
                - text: {target: {css: "#deleted"}, equals: Deleted Draft B}
            """,
        )
    )
    assert result.verified, result.reason


async def test_target_ambiguous_shows_no_typed_secret(run_text: RunText) -> None:
    secret = "s3cret-Typed-Value"
    text = recipe(
        "/form",
        """
        - id: name
          tab: site
          fill: {target: {label: Name}, value: "{{ token }}"}
        - id: message
          tab: site
          fill: {target: {label: Message}, value: "{{ token }}"}
        - id: some-textbox
          tab: site
          fill: {target: {role: textbox}, value: x}
        """,
        params="token: {type: string, secret: true}",
    )
    result = await run_text(text, {"token": secret})
    assert result.reason_code == "TARGET_AMBIGUOUS"
    assert '"Name"' in (result.reason or "")
    assert secret not in serialized(result)


# EXPECTATION_FAILED


async def test_expectation_failed_names_the_expectation(run_text: RunText) -> None:
    result = await run_text(
        failing(
            """
- id: wrong-page
  tab: site
  timeout: TIMEOUT
  verify_outcome: {title: {equals: Orders}}
""",
            start="/items?page=1",
        )
    )
    assert (result.reason_code, result.failing_step) == ("EXPECTATION_FAILED", "wrong-page")
    assert "Orders" in (result.reason or "")
    assert "Items" in (result.reason or "")  # what was found instead


# ORIGIN_BLOCKED


@pytest.mark.parametrize(
    "url",
    ["http://example.invalid/", "https://127.0.0.1:9/other"],
    ids=["other-host", "other-port"],
)
async def test_goto_outside_the_role_origins_is_blocked(run_text: RunText, url: str) -> None:
    result = await run_text(
        recipe(
            "/form",
            f"""
            - id: leave
              tab: site
              goto: "{url}"
            """,
        )
    )
    assert (result.reason_code, result.failing_step) == ("ORIGIN_BLOCKED", "leave")
    assert url in (result.reason or "")
    assert "'site'" in (result.reason or "")


async def test_click_on_a_link_to_another_origin_is_blocked(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/external",
            """
            - id: leave
              tab: site
              click: {target: {role: link, name: Leave site}}
            """,
        )
    )
    assert (result.reason_code, result.failing_step) == ("ORIGIN_BLOCKED", "leave")
    assert "example.invalid" in (result.reason or "")


async def test_declared_origins_allow_another_origin(run_text: RunText, site: FixtureSite) -> None:
    """A role may visit the origins it declares, here the site under its other host name."""
    other = site.base_url.replace("127.0.0.1", "localhost")
    text = f"""
name: two-origins
tabs:
  site:
    start: "{{{{ base_url }}}}/form"
    origins: ["{{{{ base_url }}}}", "{other}"]
steps:
  - id: other-origin
    tab: site
    goto: "{other}/items?page=1"
    expect:
      - url: "{other}/items?page=1"
"""
    result = await run_text(text)
    assert result.verified, result.reason


# TAB_CLOSED is covered with the chooser popup in test_tabs.py.

# NAVIGATION_FAILED


async def test_start_page_answering_500_is_navigation_failed(
    run_text: RunText, site: FixtureSite
) -> None:
    site.set_fault("/form", status=500, times=10)  # every retry of the navigation sees it
    result = await run_text(
        recipe(
            "/form",
            """
            - id: name
              tab: site
              fill: {target: {label: Name}, value: Ada}
            """,
        )
    )
    assert (result.reason_code, result.failing_step) == ("NAVIGATION_FAILED", "name")
    assert "500" in (result.reason or "")


async def test_goto_answering_500_is_navigation_failed(
    run_text: RunText, site: FixtureSite
) -> None:
    site.set_fault("/posts", status=503, times=10)
    result = await run_text(
        recipe(
            "/form",
            """
            - id: list
              tab: site
              goto: /posts
            """,
        )
    )
    assert (result.reason_code, result.failing_step) == ("NAVIGATION_FAILED", "list")
    assert "503" in (result.reason or "")


async def test_goto_timing_out_is_navigation_failed(run_text: RunText) -> None:
    result = await run_text(
        failing(
            """
- id: slow
  tab: site
  timeout: TIMEOUT
  goto: /slow?ms=3000
""",
            start="/form",
        )
    )
    assert (result.reason_code, result.failing_step) == ("NAVIGATION_FAILED", "slow")


# OUTCOME_UNKNOWN


PUBLISH = """
- id: title
  tab: site
  fill: {target: {label: Title}, value: Maybe published}
- id: publish
  tab: site
  timeout: 2000
  click: {target: {role: button, name: BUTTON}}
  effect: submit
  expect:
    - visible: {role: heading, name: Never shown}
"""


async def test_failed_expectation_after_a_submission_is_outcome_unknown(
    run_text: RunText, site: FixtureSite
) -> None:
    result = await run_text(failing(PUBLISH.replace("BUTTON", "Publish"), start="/posts/new"))
    assert result.state is IterationState.UNKNOWN
    assert not result.verified
    assert (result.reason_code, result.failing_step) == ("OUTCOME_UNKNOWN", "publish")
    assert "EXPECTATION_FAILED" in (result.reason or "")
    assert site.submission_count("post") == 1  # it did happen: only a probe can tell


async def test_submission_that_never_dispatched_is_a_plain_failure(
    run_text: RunText, site: FixtureSite
) -> None:
    never = PUBLISH.replace("BUTTON", "Post it").replace("timeout: 2000", "timeout: TIMEOUT")
    result = await run_text(failing(never, start="/posts/new"))
    assert result.state is IterationState.FAILED
    assert result.reason_code == "TARGET_MISSING"
    assert site.submission_count() == 0


# BROWSER_NOT_FOUND


def test_explicit_browser_path_that_does_not_exist(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-chromium")
    with pytest.raises(BrowserNotFound, match="--browser") as caught:
        find_browser(missing, environ={})
    assert missing in caught.value.message
    assert "--browser" in caught.value.fix


def test_browser_from_environment_that_is_not_executable(tmp_path: Path) -> None:
    plain = tmp_path / "chromium"
    plain.write_text("not a program")
    plain.chmod(stat.S_IRUSR | stat.S_IWUSR)
    with pytest.raises(BrowserNotFound, match=BROWSER_ENV):
        find_browser(None, environ={BROWSER_ENV: str(plain)})


def test_discovery_without_any_candidate() -> None:
    with pytest.raises(BrowserNotFound) as caught:
        find_browser(None, playwright_build="/nonexistent/chrome", environ={}, which=lambda n: None)
    assert "apt-get install chromium" in caught.value.fix


def test_discovery_order() -> None:
    found = {"chromium-browser": "/opt/cb", "google-chrome": "/opt/gc"}
    assert find_browser(None, environ={}, which=found.get) == "/opt/cb"
    assert find_browser(None, playwright_build=__file__, environ={}, which=found.get) is None


def test_headless_runs_prefer_a_headless_shell_and_headed_runs_a_full_browser() -> None:
    found = {"chromium": "/usr/bin/chromium", "chromium-headless-shell": "/usr/bin/shell"}
    assert find_browser(None, environ={}, which=found.get) == "/usr/bin/shell"
    assert find_browser(None, headless=False, environ={}, which=found.get) == "/usr/bin/chromium"
    only_shell = {"chromium-headless-shell": "/usr/bin/shell"}
    with pytest.raises(BrowserNotFound, match="no Chromium found"):
        find_browser(None, headless=False, environ={}, which=only_shell.get)
    explicit = find_browser("/usr/bin/env", headless=True, environ={}, which=found.get)
    assert explicit == "/usr/bin/env"  # an explicit path wins over every preference


async def test_host_with_a_missing_browser_does_not_start(tmp_path: Path) -> None:
    host = PlaywrightHost(BrowserSettings(executable=str(tmp_path / "absent")))
    with pytest.raises(BrowserNotFound):
        async with host:
            pytest.fail("the host started without a browser")


async def test_host_with_a_browser_that_fails_to_launch(tmp_path: Path) -> None:
    fake = tmp_path / "fake-chromium"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    host = PlaywrightHost(BrowserSettings(executable=str(fake)))
    with pytest.raises(BrowserNotFound, match="did not start"):
        async with host:
            pytest.fail("the host started with a broken browser")
    assert os.access(fake, os.X_OK)


# PARAM_MISSING / PARAM_INVALID (raised at bind time, before any browser)

PARAMS_RECIPE = recipe(
    "/items?page={{ page }}",
    """
    - id: look
      tab: site
      verify_outcome: {title: {equals: Items}}
    """,
    params="""
    page: {type: integer, required: true}
    mode: {type: enum, choices: [fast, careful], default: fast}
    pin: {type: string, secret: true}
    report: {type: file}
    """,
)


def test_missing_required_param() -> None:
    with pytest.raises(ParamMissing, match="'page'"):
        make_plan(PARAMS_RECIPE, {}, base_url="http://127.0.0.1:1")


def test_missing_base_url() -> None:
    with pytest.raises(ParamMissing, match="base URL"):
        make_plan(PARAMS_RECIPE, {"page": 1})


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"page": "two"}, "'page' must be integer"),
        ({"page": "1.5"}, "'page' must be integer"),
        ({"page": 1, "mode": "reckless"}, "choose one of fast, careful"),
        ({"page": 1, "report": "/nonexistent/report.csv"}, "no such file"),
        ({"page": 1, "colour": "red"}, "unknown parameter 'colour'"),
    ],
    ids=["not-a-number", "not-whole", "not-a-choice", "no-such-file", "undeclared"],
)
def test_invalid_param(values: dict[str, object], named: str) -> None:
    with pytest.raises(ParamInvalid, match=named):
        make_plan(PARAMS_RECIPE, values, base_url="http://127.0.0.1:1")


def test_invalid_secret_param_does_not_show_its_value() -> None:
    text = recipe(
        "/", "- {id: look, tab: site, goto: /}", params="pin: {type: integer, secret: true}"
    )
    with pytest.raises(ParamInvalid) as caught:
        make_plan(text, {"pin": "hunter2"}, base_url="http://127.0.0.1:1")
    assert "hunter2" not in str(caught.value)
    assert "secret" in caught.value.message


def test_upload_of_a_missing_file_is_param_invalid() -> None:
    text = recipe(
        "/form",
        "- id: attach\n  tab: site\n"
        '  upload: {target: {label: Attachment}, files: ["/nonexistent/x"]}',
    )
    with pytest.raises(ParamInvalid, match="does not exist"):
        make_plan(text, base_url="http://127.0.0.1:1")


# SITE_UNREACHABLE: no page came back at all (refused, TLS for real on loopback; DNS by its
# message, since a lookup would leave the machine)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("base", "net_error"),
    [
        ("http://127.0.0.1:{closed}", "ERR_CONNECTION_REFUSED"),  # nothing listens there
        ("https://{site}", "ERR_SSL_PROTOCOL_ERROR"),  # TLS to a server that speaks plain HTTP
    ],
)
async def test_a_site_that_answers_no_page_is_site_unreachable_with_its_url(
    host: Any, site: FixtureSite, base: str, net_error: str
) -> None:
    base_url = base.format(closed=_closed_port(), site=site.base_url.removeprefix("http://"))
    plan = make_plan(recipe("/form", LOADED, timeout=5000), base_url=base_url)
    result = await ProgramRunner(host).run_iteration(plan)
    assert (result.reason_code, result.failing_step) == ("SITE_UNREACHABLE", "loaded")
    error = result.steps[-1].error
    assert error is not None
    assert (error["url"], error["net_error"]) == (f"{base_url}/form", net_error)
    assert f"{base_url}/form could not be reached" in (result.reason or "")


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("net::ERR_NAME_NOT_RESOLVED at http://x.invalid/", "the host name did not resolve"),
        ("net::ERR_CERT_AUTHORITY_INVALID at https://x.test/", "the TLS certificate was refused"),
        ("net::ERR_CONNECTION_RESET at http://x.test/", "the connection failed"),
    ],
)
def test_chromiums_network_errors_name_what_failed(message: str, said: str) -> None:
    found = _unreachable(f"Page.goto: {message}", "goto http://x.test/", "site")
    assert found is not None
    assert found.context["url"] == message.split(" at ")[1]
    assert said in found.message


def test_an_aborted_or_blocked_request_is_not_an_unreachable_site() -> None:
    for name in ("ERR_ABORTED", "ERR_BLOCKED_BY_CLIENT", "ERR_FAILED", "ERR_TOO_MANY_REDIRECTS"):
        assert _unreachable(f"net::{name} at http://x.test/", "goto http://x.test/", "t") is None
