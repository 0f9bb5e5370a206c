"""The distributed bench's batch check fails on every kind of damage it is meant to catch.

The bench itself (workers, Postgres, Chromium) runs by hand: ``python -m
northstar.bench.distributed``; these tests check its verdict over plain journal views.
"""

from __future__ import annotations

from dataclasses import replace

from northstar.bench.distributed import Throughput, batch_problems
from northstar.readers.views import IterationView, RunDetail, RunEvent, RunSummary, StepView

TITLES = ["a", "b", "c"]


def _step(events: tuple[str, ...]) -> StepView:
    stamped = tuple((event, "t") for event in events)
    return StepView(
        "publish", "admin", "click", 0, "passed", "passed", "t", "t", 1.0, (), None, stamped
    )


def _iteration(
    number: int, events: tuple[str, ...] = ("started", "in_flight", "dispatched", "passed")
) -> IterationView:
    return IterationView(
        number,
        "verified",
        "verified",
        1,
        "fp",
        "t",
        "t",
        1.0,
        None,
        None,
        None,
        0,
        None,
        (_step(events),),
    )


def _detail(
    iterations: list[IterationView], workers: tuple[str, ...] = ("w1", "w2", "w1")
) -> RunDetail:
    summary = RunSummary(
        "r-1",
        "publish-post",
        "p.yaml",
        "p",
        "default",
        "verified",
        "verified",
        3,
        3,
        3,
        "t",
        "t",
        "t",
        None,
        None,
    )
    claims = tuple(RunEvent("t", "iteration_claimed", {"worker": w}) for w in workers)
    return RunDetail(summary, "h", "fp", {}, tuple(iterations), claims)


def test_a_clean_batch_has_no_problems() -> None:
    detail = _detail([_iteration(n) for n in (1, 2, 3)])

    assert batch_problems(detail, TITLES, ["c", "a", "b"]) == []


def test_a_repeated_post_a_failed_iteration_a_double_send_and_one_worker_are_caught() -> None:
    failed = replace(_iteration(2), state="failed")
    twice = _iteration(3, ("started", "in_flight", "in_flight", "dispatched", "passed"))
    detail = _detail([_iteration(1), failed, twice], workers=("w1", "w1", "w1"))

    problems = batch_problems(detail, TITLES, ["a", "b", "c", "c"])

    assert problems == [
        "the site received 4 posts (1 repeated)",
        "iteration states {'verified': 2, 'failed': 1}",
        "in_flight was not recorded exactly once per iteration",
        "iterations claimed by {'w1': 3}, not by both workers",
    ]


def test_throughput_rates() -> None:
    result = Throughput("postgres-2", 40, wall_s=20.0, span_s=10.0)

    assert (result.wall_rate, result.span_rate) == (2.0, 4.0)
