"""Repeat with proof in real Chromium: the server-side counter is the oracle.

Each test runs ``execute_run`` with the session's headless browser against the fixture
site and reads the outcome back from the journal with the read-only readers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.journal import Journal
from northstar.plan.compiler import prepare
from northstar.recipe.inputs import validate_rows
from northstar.recipe.loader import parse_recipe
from northstar.run.execution import RunRequest, StopSignal, execute_run
from northstar.run.repeat import RepeatOptions

pytestmark = pytest.mark.browser

PUBLISH = """
name: publish-post
params:
  title: {type: string, required: true}
  confirmation: {type: string, default: ""}
tabs:
  admin: {start: "{{ base_url }}/posts/new"}
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
  - id: confirm
    tab: admin
    timeout: 1500
    verify_outcome:
      text: {target: {role: status}, equals: "Post published: {{ confirmation }}"}
outputs:
  listed_title: {tab: admin, from: text, target: {role: status}, regex: "Post published: (.*)"}
"""


def request_for(
    tmp_path: Path, rows: list[dict[str, Any]], base_url: str, *, count: int | None = None
) -> RunRequest:
    recipe_path = tmp_path / "publish-post.yaml"
    recipe_path.write_text(PUBLISH)
    compiled = prepare(parse_recipe(PUBLISH, source=str(recipe_path)), source=str(recipe_path))
    typed = validate_rows(compiled.recipe.params, rows, {})
    return RunRequest(
        recipe_path=recipe_path,
        compiled=compiled,
        rows=typed,
        repeat=RepeatOptions.of(count or len(typed)),
        base_url=base_url,
    )


def title_rows(n: int, *, wrong_at: int | None = None) -> list[dict[str, Any]]:
    return [
        {"title": f"Post {i}", "confirmation": "nope" if i == wrong_at else f"Post {i}"}
        for i in range(1, n + 1)
    ]


async def test_repeat_five_gives_five_submissions_and_five_verified(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    request = request_for(
        tmp_path, [{"title": "Same", "confirmation": "Same"}], site.base_url, count=5
    )
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=host, journal=journal)
    assert outcome.status == "verified"
    assert site.submission_count("post") == 5
    detail = readers.get_run(tmp_path / "journal.db", outcome.run_id)
    assert [i.state for i in detail.iterations] == ["verified"] * 5
    assert all(i.outputs == {"listed_title": "Same"} for i in detail.iterations)


async def test_failure_in_iteration_three_stops_the_loop(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    request = request_for(tmp_path, title_rows(5, wrong_at=3), site.base_url)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=host, journal=journal)
    assert outcome.error is not None
    assert outcome.error.code == "PROGRAM_ITERATION_NOT_VERIFIED"
    assert outcome.status == "failed"
    assert [r.iteration for r in outcome.summary.verified] == [1, 2]
    detail = readers.get_run(tmp_path / "journal.db", outcome.run_id)
    states = {i.number: i.state for i in detail.iterations}
    assert states == {1: "verified", 2: "verified", 3: "failed"}  # 4 and 5 never started
    third = detail.iterations[2]
    assert third.reason_code == "EXPECTATION_FAILED"
    assert third.failing_step == "confirm"
    assert site.submission_count("post") == 3  # nothing beyond the third
    assert [s["title"] for s in site.submissions()] == ["Post 1", "Post 2", "Post 3"]
    shots = sorted(p.name for p in outcome.artifacts.iterdir()) if outcome.artifacts else []
    assert "iteration-0003-failure-admin.png" in shots


async def test_batch_rows_give_outputs_with_each_rows_values(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    request = request_for(tmp_path, title_rows(10), site.base_url)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=host, journal=journal)
    assert outcome.status == "verified"
    assert [(i, v) for i, _, v in outcome.summary.outputs] == [
        (n, f"Post {n}") for n in range(1, 11)
    ]
    saved = (outcome.artifacts or tmp_path) / "iteration-0007.json"
    assert '"Post 7"' in saved.read_text()


async def test_output_that_cannot_be_saved_leaves_iteration_needing_review(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    request = request_for(tmp_path, title_rows(2), site.base_url)

    def block_first_outputs_file(run_id: str) -> None:
        # A folder where the outputs file should be makes saving it fail.
        (tmp_path / "runs" / run_id / "iteration-0001.json").mkdir(parents=True)

    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(
            request, host=host, journal=journal, on_start=block_first_outputs_file
        )
    assert outcome.status == "needs_review"
    assert outcome.results[0].reason_code == "OUTPUT_SAVE_FAILED"
    assert not outcome.summary.verified
    assert site.submission_count("post") == 1


async def test_recipe_changed_between_iterations_stops_before_dispatch(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    request = request_for(tmp_path, title_rows(3), site.base_url)

    def edit_recipe_after_first(result: Any) -> None:
        if result.iteration == 1:
            request.recipe_path.write_text(PUBLISH.replace("timeout: 1500", "timeout: 1600"))

    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(
            request, host=host, journal=journal, on_result=edit_recipe_after_first
        )
    assert outcome.error is not None
    assert outcome.error.code == "DEFINITION_CHANGED"
    assert site.submission_count("post") == 1


class StopAfterReads(StopSignal):
    """A stop that arrives after the loop and runner have asked ``reads`` times."""

    def __init__(self, reads: int) -> None:
        super().__init__()
        self.reads = reads

    @property
    def requested(self) -> bool:
        self.reads -= 1
        return self.reads < 0


async def test_stop_before_the_first_iteration_starts_nothing(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    request = request_for(tmp_path, title_rows(3), site.base_url)
    stop = StopSignal()
    stop.request()
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=host, journal=journal, stop=stop)
    assert outcome.status == "stopped"
    assert outcome.results == []
    assert site.submission_count("post") == 0


async def test_stop_during_an_iteration_marks_it_stopped_and_starts_nothing_more(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    request = request_for(tmp_path, title_rows(3), site.base_url)
    stop = StopAfterReads(2)  # the loop's check, the check before step 1, then stop
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=host, journal=journal, stop=stop)
    assert outcome.status == "stopped"
    assert [r.state for r in outcome.results] == ["stopped"]
    assert [s.step_id for s in outcome.results[0].steps] == ["title"]
    assert site.submission_count("post") == 0
    detail = readers.get_run(tmp_path / "journal.db", outcome.run_id)
    assert [i.state for i in detail.iterations] == ["stopped"]
