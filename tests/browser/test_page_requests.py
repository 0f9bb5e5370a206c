"""The idle decision, without a browser: quiet time counted with an injected clock."""

from __future__ import annotations

import pytest

from browser_adapters.page_requests import PageRequests, quiet_left_ms


def test_a_pending_request_means_not_idle_whatever_the_time() -> None:
    assert quiet_left_ms(1, last_change=0.0, now=100.0, quiet_ms=500) is None


def test_quiet_time_is_counted_from_the_last_change() -> None:
    assert quiet_left_ms(0, last_change=10.0, now=10.2, quiet_ms=500) == pytest.approx(300.0)
    assert quiet_left_ms(0, last_change=10.0, now=11.0, quiet_ms=500) == 0.0


class _Request:
    def __init__(self, method: str) -> None:
        self.method = method


def test_requests_are_tracked_and_only_changing_methods_are_counted_as_sent() -> None:
    now = [0.0]
    requests = PageRequests(clock=lambda: now[0])
    fetch, post = _Request("GET"), _Request("POST")
    requests.started(fetch)  # type: ignore[arg-type]
    requests.started(post)  # type: ignore[arg-type]
    assert (requests.pending, requests.changing_sent) == (2, 1)
    now[0] = 1.0
    requests.ended(fetch)  # type: ignore[arg-type]
    requests.ended(post)  # type: ignore[arg-type]
    now[0] = 1.3
    assert requests.quiet_left(500, since=0.0) == pytest.approx(200.0)
    assert requests.quiet_left(500, since=1.2) == pytest.approx(400.0)
