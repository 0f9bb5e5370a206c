"""Parallel lanes: a batch dealt over K lanes sharing one browser, each lane verified in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.cli._inputs import build_request
from northstar.journal import Journal
from northstar.results import IterationResult, IterationState
from northstar.run.execution import (
    RunRequest,
    assign_lanes,
    execute_run,
    merge_summaries,
    run_status,
)
from northstar.run.repeat import RepeatSummary
from northstar.run.runner import ProgramRunner
from tests.conftest import RECIPES, make_plan

POSTS = """
name: lane-post
params:
  title: {type: string, required: true}
  shown: {type: string, required: true}
  page: {type: string, default: /posts/new}
tabs:
  admin: {start: "{{ base_url }}{{ page }}"}
steps:
  - id: title
    tab: admin
    fill: {target: {label: Title}, value: "{{ title }}"}
  - id: publish
    tab: admin
    click: {target: {role: button, name: Publish}}
    effect: submit
    expect:
      - url: "**/posts?created=*"
  - id: listed
    tab: admin
    timeout: 1500
    verify_outcome: {visible: {role: link, name: "{{ shown }}", exact: true}}
"""


def test_iterations_are_dealt_to_lanes_in_turn() -> None:
    assert assign_lanes([1, 2, 3, 4, 5], 2) == [[1, 3, 5], [2, 4]]
    assert assign_lanes([1, 2], 4) == [[1], [2]]  # never more lanes than iterations
    assert assign_lanes([3, 4, 5], 1) == [[3, 4, 5]]


def state(number: int, value: str) -> IterationResult:
    return IterationResult(number, IterationState(value))


def test_run_status_takes_the_most_serious_state() -> None:
    verified = [state(1, "verified"), state(2, "verified")]
    assert run_status(verified, all_verified=True, stopped=False) == "verified"
    assert run_status([*verified, state(3, "failed")], all_verified=False, stopped=True) == (
        "failed"
    )
    mixed = [state(1, "stopped"), state(2, "unknown"), state(3, "failed")]
    assert run_status(mixed, all_verified=False, stopped=True) == "blocked"
    assert run_status(verified, all_verified=False, stopped=True) == "stopped"


def test_lane_summaries_merge_in_iteration_order() -> None:
    first = RepeatSummary(requested=2).add(state(3, "verified")).add(state(1, "verified"))
    second = RepeatSummary(requested=1).add(state(2, "verified"))
    merged = merge_summaries(3, [first, second])
    assert [r.iteration for r in merged.verified] == [1, 2, 3]
    assert merged.all_verified


def lane_request(tmp_path: Path, titles: list[str], base_url: str, **options: Any) -> RunRequest:
    recipe = tmp_path / "lane-post.yaml"
    recipe.write_text(POSTS)
    rows = tmp_path / "rows.csv"
    # Row B1 opens a page that does not exist: its lane fails at once (a 404 is not retried).
    lines = [f"{t},{t},{'/no-such-page' if t == 'B1' else ''}" for t in titles]
    rows.write_text("title,shown,page\n" + "\n".join(lines) + "\n")
    return build_request(
        {
            "recipe": str(recipe),
            "params": (),
            "params_file": str(rows),
            "base_url": base_url,
            **options,
        }
    )


@pytest.mark.browser
async def test_two_lanes_verify_every_row_and_record_their_lane(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    titles = [f"Lane post {n}" for n in range(1, 7)]
    request = lane_request(tmp_path, titles, site.base_url, concurrency=2)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=host, journal=journal)
    assert outcome.status == "verified"
    assert sorted(s["title"] for s in site.submissions()) == sorted(titles)
    detail = readers.get_run(tmp_path / "journal.db", outcome.run_id)
    lanes = {i.number: i.lane for i in detail.iterations}
    assert lanes == {1: 1, 2: 2, 3: 1, 4: 2, 5: 1, 6: 2}
    assert [r.iteration for r in outcome.summary.verified] == [1, 2, 3, 4, 5, 6]


@pytest.mark.browser
@pytest.mark.parametrize("fail_fast", [False, True])
async def test_a_stopped_lane_leaves_the_others_unless_fail_fast(
    host: Any, site: FixtureSite, tmp_path: Path, fail_fast: bool
) -> None:
    # Row 1's page does not exist, so lane 1 stops at its first iteration.
    titles = ["B1", "B2", "B3", "B4", "B5", "B6"]
    request = lane_request(tmp_path, titles, site.base_url, concurrency=2, fail_fast=fail_fast)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=host, journal=journal)
    assert outcome.error is not None
    assert outcome.error.code == "PROGRAM_ITERATION_NOT_VERIFIED"
    assert outcome.status == "failed"
    lane_two = [r.iteration for r in outcome.results if r.iteration % 2 == 0 and r.verified]
    detail = readers.get_run(tmp_path / "journal.db", outcome.run_id)
    started = {i.number: i.started_at or "" for i in detail.iterations}
    failed_at = next(i.ended_at or "" for i in detail.iterations if i.number == 1)
    if fail_fast:  # lane 2 finishes what it started, and starts nothing after the failure
        assert all(started[n] <= failed_at for n in lane_two)
        assert len(lane_two) < 3
    else:
        assert lane_two == [2, 4, 6]
    # Row 1 sent nothing (its page never loaded); lane 2 sent what it started.
    assert site.submission_count("post") == len(lane_two)
    assert [r.state for r in outcome.results if r.iteration == 1] == ["failed"]
    assert not [r for r in outcome.results if r.iteration in (3, 5)]  # lane 1 stopped


@pytest.mark.browser
async def test_a_kept_context_keeps_its_session_and_reopens_tabs(
    host: Any, site: FixtureSite
) -> None:
    login = make_plan(
        (RECIPES / "login.yaml").read_text(),
        {"password": "demo-password"},
        base_url=site.base_url,
    )
    account = make_plan(
        """
name: account
tabs:
  site: {start: "{{ base_url }}/account"}
steps:
  - id: account
    tab: site
    timeout: 2000
    verify_outcome: {visible: {role: heading, name: Account, exact: true}}
""",
        base_url=site.base_url,
        iteration=2,
    )
    runner = ProgramRunner(host)
    async with host.session(login) as kept:
        assert (await runner.run_iteration(login, session=kept)).verified
        assert (await runner.run_iteration(account, session=kept)).verified
    fresh = await runner.run_iteration(account)  # a fresh context has no session cookie
    assert fresh.state == "failed"


@pytest.mark.browser
async def test_a_resume_deals_only_the_rest_over_the_runs_lanes(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    """Lane 1 stops at row 1; the resume runs rows 1, 3, 5 on two lanes and leaves 2, 4, 6."""
    from northstar.composition import run_options
    from northstar.run.recovery import resume_run

    titles = ["B1", "B2", "B3", "B4", "B5", "B6"]
    request = lane_request(tmp_path, titles, site.base_url, concurrency=2)
    with Journal.open(tmp_path / "journal.db") as journal:
        first = await execute_run(request, host=host, journal=journal)
        assert [r.iteration for r in first.results if r.verified] == [2, 4, 6]
        recorded = run_options(journal, first.run_id, {"params_file": str(tmp_path / "rows.csv")})
        assert recorded["concurrency"] == 2
        again = build_request({**recorded, "params": ()})
        resumed = await resume_run(
            first.run_id, first.credential, again, host=host, journal=journal
        )
    # Dealt [1, 3, 5] over two lanes: lane 1 gets 1 (fails again) and 5 (never starts),
    # lane 2 gets 3. Nothing verified before was run again.
    assert sorted(r.iteration for r in resumed.results) == [1, 3]
    assert [r.iteration for r in resumed.results if r.verified] == [3]
    detail = readers.get_run(tmp_path / "journal.db", first.run_id)
    assert {i.number: i.lane for i in detail.iterations if i.number in (1, 3)} == {1: 1, 3: 2}
    assert site.submission_count("post") == 4  # B2, B4, B6, then B3: each once
