"""Fixtures of the distributed tests: worker processes killed at the end of each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fixtures.worker_processes import Worker


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    """The workers a test starts (append them): each is killed when the test ends."""
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.kill()
