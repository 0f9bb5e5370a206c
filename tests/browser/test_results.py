"""What an iteration result carries, and what it never carries: secret values.

The result is what the journal stores and ``--json`` prints, so it is checked here in its
serialized form too.
"""

from __future__ import annotations

import json

import pytest

from fixtures.site_server import FixtureSite
from northstar.results import IterationState, StepStatus
from tests.browser.conftest import FAIL_FAST_MS, LOADED, RunText, recipe, serialized

pytestmark = pytest.mark.browser

PASSWORD = "demo-password"  # the fixture site's; a secret param of the login recipes below
TOKEN = "tok-5ecret-9f2"

LOGIN = """
name: login-test
timeout: 5000
params:
  password: {type: string, secret: true}
tabs:
  site: {start: "{{ base_url }}/login"}
steps:
  - id: username
    tab: site
    fill: {target: {label: Username}, value: demo}
  - id: password
    tab: site
    fill: {target: {label: Password}, value: "{{ password }}"}
  - id: password-typed
    tab: site
    timeout: 5000
    verify_field: {target: {label: Password}, equals: "{{ password }}"}
  - id: sign-in
    tab: site
    click: {target: {role: button, name: Sign in}}
  - id: on-account
    tab: site
    timeout: 5000
    verify_outcome: {url: "**/account"}
  - id: who
    tab: site
    extract: {as: who, from: text, target: {text: Signed in as, exact: false}}
outputs:
  account_url: {tab: site, from: url}
done_when:
  - {tab: site, visible: {role: button, name: Sign out}}
"""


def login_failing_at(step: str, old: str, new: str) -> str:
    """LOGIN with one passive step changed to fail, and given a short timeout."""
    head, tail = LOGIN.split(f"- id: {step}\n", 1)
    tail = tail.replace("timeout: 5000", f"timeout: {FAIL_FAST_MS}", 1).replace(old, new, 1)
    return f"{head}- id: {step}\n{tail}"


async def test_verified_result_has_steps_timing_evidence_outputs_and_no_secret(
    run_text: RunText, site: FixtureSite
) -> None:
    result = await run_text(LOGIN, {"password": PASSWORD})
    assert result.verified, result.reason
    assert result.state is IterationState.VERIFIED
    assert result.iteration == 1
    assert [s.step_id for s in result.steps] == [
        "username",
        "password",
        "password-typed",
        "sign-in",
        "on-account",
        "who",
        "done_when",
    ]
    assert all(s.status is StepStatus.PASSED for s in result.steps)
    assert all(s.duration_ms > 0 for s in result.steps[:3])
    assert result.duration_ms >= sum(s.duration_ms for s in result.steps)
    assert result.evidence_count == sum(len(s.evidence) for s in result.steps)
    # tab opened, 3 acted-on elements, field value, url, the extracted value, done_when's visible
    assert result.evidence_count == 8
    acted_on = [e.found for s in result.steps for e in s.evidence if e.kind == "acted_on"]
    assert acted_on[1] == 'textbox "Password" <input type=password>'
    assert dict(result.outputs) == {
        "who": "Signed in as demo",
        "account_url": f"{site.base_url}/account",
    }
    assert (result.reason_code, result.reason, result.failing_step) == (None, None, None)
    text = serialized(result)
    assert PASSWORD not in text
    assert "[redacted]" in text  # the field check is described without the secret
    as_json = json.loads(text)
    assert as_json["verified"] is True
    assert as_json["evidence_count"] == result.evidence_count
    assert as_json["state"] == "verified"


async def test_failed_result_names_the_reason_and_the_failing_step(run_text: RunText) -> None:
    text = login_failing_at("on-account", "**/account", "**/dashboard")
    result = await run_text(text, {"password": PASSWORD})
    assert result.state is IterationState.FAILED
    assert (result.reason_code, result.failing_step) == ("EXPECTATION_FAILED", "on-account")
    assert [s.step_id for s in result.steps] == [
        "username",
        "password",
        "password-typed",
        "sign-in",
        "on-account",
    ]
    failed = result.steps[-1]
    assert failed.status is StepStatus.FAILED
    assert failed.error is not None
    assert failed.error["code"] == "EXPECTATION_FAILED"
    assert failed.error["step"] == "on-account"
    assert failed.error["tab"] == "site"
    assert failed.error["fix"]
    assert dict(result.outputs) == {}
    assert json.loads(serialized(result))["verified"] is False


async def test_secret_is_not_in_a_failed_expectation(run_text: RunText) -> None:
    """Playwright's message quotes expected and received values; both hold the secret."""
    text = login_failing_at("password-typed", '"{{ password }}"', '"{{ password }}!"')
    result = await run_text(text, {"password": PASSWORD})
    assert (result.reason_code, result.failing_step) == ("EXPECTATION_FAILED", "password-typed")
    assert PASSWORD not in serialized(result)


async def test_secret_is_not_in_a_missing_target(run_text: RunText) -> None:
    text = recipe(
        "/menu",
        LOADED
        + """
- id: find
  tab: site
  timeout: 400
  click: {target: {role: button, name: "Delete {{ token }}"}}
""",
        params="token: {type: string, secret: true}",
    )
    result = await run_text(text, {"token": TOKEN})
    assert result.reason_code == "TARGET_MISSING"
    assert TOKEN not in serialized(result)


async def test_secret_in_urls_is_not_in_the_result(run_text: RunText) -> None:
    """A token in a start URL, in a timed-out navigation and in a URL output stays out."""
    text = recipe(
        "/items?page=1&token={{ token }}",
        LOADED
        + """
- id: slow
  tab: site
  timeout: 400
  retry: {attempts: 1}
  goto: /slow?ms=2000&token={{ token }}
""",
        params="token: {type: string, secret: true}",
        tail="""
        outputs:
          where: {tab: site, from: url}
        """,
    )
    result = await run_text(text, {"token": TOKEN})
    assert (result.reason_code, result.failing_step) == ("NAVIGATION_FAILED", "slow")
    assert "[redacted]" in (result.reason or "")
    assert TOKEN not in serialized(result)

    quick = text.replace("ms=2000", "ms=0").replace("timeout: 400", "timeout: 5000")
    verified = await run_text(quick, {"token": TOKEN})
    assert verified.verified, verified.reason
    assert verified.outputs["where"].endswith("/slow?ms=0&token=[redacted]")
    assert TOKEN not in serialized(verified)
