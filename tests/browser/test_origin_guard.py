"""The origin guard's route pattern: only requests outside a run's origins pay a hop to Python.

Whether a navigation is really blocked is tested in a browser (test_errors.py); this pins the
pattern that decides which requests reach the guard at all.
"""

from __future__ import annotations

import pytest

from browser_adapters.session import foreign_origin_pattern

pytestmark = pytest.mark.browser

ORIGINS = ["http://127.0.0.1:8123", "https://admin.example.test"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8123",
        "http://127.0.0.1:8123/",
        "http://127.0.0.1:8123/form?x=1",
        "http://127.0.0.1:8123?x=1",
        "http://127.0.0.1:8123#top",
        "https://admin.example.test/posts",
    ],
)
def test_allowed_origins_are_not_routed(url: str) -> None:
    assert foreign_origin_pattern(ORIGINS).search(url) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://example.invalid/",
        "https://127.0.0.1:8123/",  # another scheme is another origin
        "http://127.0.0.1:81234/",  # a longer port is another origin
        "http://127.0.0.1:8123.evil.test/",
        "http://admin.example.test/posts",
    ],
)
def test_other_origins_are_routed(url: str) -> None:
    assert foreign_origin_pattern(ORIGINS).search(url) is not None


def test_without_origins_every_web_url_is_routed() -> None:
    pattern = foreign_origin_pattern([])
    assert pattern.search("http://127.0.0.1:8123/")
    assert not pattern.search("data:text/html,hello")
