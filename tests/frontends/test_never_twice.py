"""The same submission asked twice is dispatched once, whichever front end asks.

The fixture site counts what it really received. Each front end asks the submission a
second time the way it can be asked again (see ``tests/frontends/conftest.py``); the
host's one dispatch routine and the journal's one verdict keep the second ask from the
browser.
"""

from __future__ import annotations

from collections import Counter

import pytest

from fixtures.site_server import FixtureSite
from tests.frontends.conftest import FrontEnd, post_flow

pytestmark = pytest.mark.browser


def posts(site: FixtureSite) -> Counter[str]:
    return Counter(s["title"] for s in site.submissions() if s["kind"] == "post")


async def test_the_same_submission_asked_twice_is_dispatched_once(
    front_end: FrontEnd, site: FixtureSite
) -> None:
    title = f"Once through {front_end.name}"
    said = await front_end.submit_twice(post_flow(title))
    assert posts(site) == Counter({title: 1}), said.text
    assert said.status in ("verified", "stopped"), said.text  # settled, nothing left unknown
    assert "Traceback" not in said.text
