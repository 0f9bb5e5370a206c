"""A probe's context sends nothing but reads: a page that posts as it loads is stopped.

``/probes/beacon`` posts as soon as it loads and shows whether the post went out; the
fixture site counts the ``beacon`` submissions it received.
"""

from __future__ import annotations

from typing import Any

import pytest

from browser_adapters.read_only import may_send
from fixtures.site_server import FixtureSite
from northstar.run.runner import ProgramRunner
from tests.conftest import make_plan

pytestmark = pytest.mark.browser

BEACON = """
name: beacon
tabs:
  page: {start: "{{ base_url }}/probes/beacon"}
steps:
  - id: outcome
    tab: page
    verify_outcome: {text: {target: {role: status}, equals: "SHOWN"}}
"""


async def test_a_read_only_context_aborts_a_post_and_lets_the_page_load(
    host: Any, site: FixtureSite
) -> None:
    refused = make_plan(BEACON.replace("SHOWN", "refused"), base_url=site.base_url)
    result = await ProgramRunner(host.read_only(None)).run_iteration(refused)
    assert result.verified, result.reason
    assert site.submission_count("beacon") == 0


async def test_an_ordinary_context_lets_the_same_post_go(host: Any, site: FixtureSite) -> None:
    sent = make_plan(BEACON.replace("SHOWN", "sent"), base_url=site.base_url)
    result = await ProgramRunner(host).run_iteration(sent)
    assert result.verified, result.reason
    assert site.submission_count("beacon") == 1


def test_only_reads_may_be_sent() -> None:
    assert [m for m in ("GET", "head", "POST", "PUT", "PATCH", "DELETE") if may_send(m)] == [
        "GET",
        "head",
    ]
