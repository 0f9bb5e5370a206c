"""Every expectation kind holds on the right page and fails, as EXPECTATION_FAILED, on a wrong one.

Each case is a page of the fixture site, a check that holds there and a close variant that
does not. The failing variant runs with a short step timeout: Playwright's assertions retry
until then, so a failure costs exactly that long and never a sleep.
"""

from __future__ import annotations

import pytest

from northstar.results import IterationState, StepStatus
from tests.browser.conftest import FAIL_FAST_MS, LOADED, RunMany, RunText, last_step, recipe

pytestmark = pytest.mark.browser

# (page, a check that holds there, a close variant that does not)
CASES = {
    "url-glob": ("/items?page=2", 'url: "**/items?page=2"', 'url: "**/items?page=3"'),
    "url-glob-star-stays-in-segment": (
        "/items?page=2",
        'url: "http://*/items?page=*"',
        'url: "*/items?page=2"',
    ),
    "url-regex": ("/items?page=2", 'url_regex: "/items\\\\?page=\\\\d+$"', 'url_regex: "page=3$"'),
    "visible": (
        "/items?page=1",
        "visible: {role: heading, name: Items}",
        "visible: {role: heading, name: Orders}",
    ),
    "hidden": ("/menu", "hidden: {role: menu}", "hidden: {role: heading, name: Menu}"),
    "text-equals": (
        "/popup/opener",
        "text: {target: {role: status}, equals: No choice yet}",
        "text: {target: {role: status}, equals: No choice}",
    ),
    "text-contains": (
        "/popup/opener",
        "text: {target: {role: status}, contains: choice}",
        "text: {target: {role: status}, contains: Chosen}",
    ),
    "value": (
        "/posts?q=needle",
        "value: {target: {label: Search}, equals: needle}",
        "value: {target: {label: Search}, equals: needles}",
    ),
    "checked-false": (
        "/form",
        "checked: {target: {role: checkbox, name: Agree to terms}, checked: false}",
        "checked: {target: {role: checkbox, name: Agree to terms}}",
    ),
    "count": (
        "/items?page=1",
        "count: {target: {role: row}, equals: 6}",
        "count: {target: {role: row}, equals: 5}",
    ),
    "title-equals": ("/items?page=1", "title: {equals: Items}", "title: {equals: Item}"),
    "title-contains": ("/items?page=1", "title: {contains: tem}", "title: {contains: Orders}"),
}


def _verify(page: str, check: str, timeout: int) -> str:
    step = f"""
- id: verify
  tab: site
  timeout: {timeout}
  verify_outcome: {{{check}}}
"""
    return recipe(page, LOADED + step)


async def test_every_expectation_kind_holds(run_text: RunText) -> None:
    """One iteration visits each case's page and checks it; a failure names the case's step."""
    steps = "".join(
        f"""
- id: {case}-page
  tab: site
  goto: {page}
- id: {case}
  tab: site
  verify_outcome: {{{holds}}}
"""
        for case, (page, holds, _) in CASES.items()
    )
    result = await run_text(recipe("/", steps))
    assert result.verified, (result.failing_step, result.reason)
    for case, (_, holds, _) in CASES.items():
        (evidence,) = next(s for s in result.steps if s.step_id == case).evidence
        assert evidence.passed
        assert evidence.kind == holds.split(":")[0]


async def test_every_expectation_kind_fails_on_a_close_variant(run_many: RunMany) -> None:
    """Each case in its own iteration (they run at once, so their timeouts overlap)."""
    results = await run_many(
        {case: _verify(page, fails, FAIL_FAST_MS) for case, (page, _, fails) in CASES.items()}
    )
    outcomes = {case: (r.state, r.reason_code, r.failing_step) for case, r in results.items()}
    failed = (IterationState.FAILED, "EXPECTATION_FAILED", "verify")
    assert outcomes == dict.fromkeys(CASES, failed)
    for result in results.values():
        assert last_step(result).status is StepStatus.FAILED
        assert last_step(result).evidence == ()


async def test_step_expectations_may_check_another_tab(run_text: RunText) -> None:
    """``expect`` entries with ``tab:`` are checked on that role's page."""
    text = """
name: two-tabs
tabs:
  writer: {start: "{{ base_url }}/posts/new"}
  reader: {start: "{{ base_url }}/posts"}
steps:
  - id: reader-open
    tab: reader
    verify_outcome: {visible: {text: No posts}}
  - id: title
    tab: writer
    fill: {target: {label: Title}, value: Cross-tab}
  - id: publish
    tab: writer
    click: {target: {role: button, name: Publish}}
    effect: submit
    expect:
      - {tab: writer, text: {target: {role: status}, equals: "Post published: Cross-tab"}}
      - {tab: reader, visible: {text: No posts}}
  - id: reload-reader
    tab: reader
    goto: /posts
    expect:
      - visible: {role: link, name: Cross-tab, exact: true}
done_when:
  - {tab: reader, count: {target: {role: row}, equals: 2}}
"""
    result = await run_text(text)
    assert result.verified, result.reason
    publish = next(s for s in result.steps if s.step_id == "publish")
    tabs_and_kinds = [(e.tab, e.kind) for e in publish.evidence]
    assert tabs_and_kinds == [("writer", "acted_on"), ("writer", "text"), ("reader", "visible")]
