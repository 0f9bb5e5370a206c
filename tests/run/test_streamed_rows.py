"""A large params file is checked as a stream and its rows are read again when run.

The request for 100,000 rows is built in bounded memory (``tracemalloc``'s peak), a bad
row 3 is refused before the rest of the file is read (a file whose tail is not even text
proves it), and a rows file that changes between the check and the run is refused.
"""

from __future__ import annotations

import tracemalloc
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.cli._inputs import build_request
from northstar.errors import FileChanged, ParamInvalid, UsageInvalid
from northstar.journal import Journal
from northstar.recipe.rows_file import LazyRows
from northstar.results import IterationResult
from northstar.run.execution import RunRequest, StopSignal, execute_run, rows_fingerprint

RECIPE = """
name: numbered
params:
  title: {type: string, required: true}
  copies: {type: integer, default: 1}
tabs:
  admin: {start: "{{ base_url }}/posts/new"}
steps:
  - id: title
    tab: admin
    fill: {target: {label: Title}, value: "{{ title }}"}
"""
ROWS = 100_000
BOUND = 16 << 20  # far below what holding 100,000 typed rows takes (about 60 MiB)
GARBAGE = b"\xff\xfe\x80 not text at all \xc3\x28\n" * 64


def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "numbered.yaml"
    path.write_text(RECIPE)
    return path


def rows_file(tmp_path: Path, count: int, name: str = "rows.csv") -> Path:
    path = tmp_path / name
    with path.open("w", encoding="utf-8") as out:
        out.write("title,copies\n")
        out.writelines(f"Post {n},{n % 7 + 1}\n" for n in range(1, count + 1))
    path.chmod(0o600)
    return path


def build(recipe_path: Path, params_file: Path, **more: Any) -> RunRequest:
    options = {"recipe": str(recipe_path), "params_file": str(params_file), "params": ()}
    return build_request({**options, "base_url": "http://127.0.0.1:9", **more})


def test_a_100000_row_file_is_checked_in_bounded_memory(tmp_path: Path) -> None:
    path = rows_file(tmp_path, ROWS)
    tracemalloc.start()
    try:
        request = build(recipe(tmp_path), path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < BOUND, f"building the request peaked at {peak / 2**20:.1f} MiB"
    assert request.repeat.count == ROWS
    assert request.row_for(ROWS) == {"title": f"Post {ROWS}", "copies": ROWS % 7 + 1}
    assert request.row_for(2) == {"title": "Post 2", "copies": 3}  # read again from the start


def test_rows_asked_out_of_order_are_each_rows_own(tmp_path: Path) -> None:
    request = build(recipe(tmp_path), rows_file(tmp_path, 300))
    order = [1, 3, 2, 200, 150, 151, 300, 1]  # lanes ask a little out of order; resumes go back
    assert [request.row_for(n)["title"] for n in order] == [f"Post {n}" for n in order]
    assert len(list(request.rows)) == 300


def bad_third_row_then_garbage(tmp_path: Path, third: str, name: str = "rows.csv") -> Path:
    """Rows 1-2 good, row 3 bad, then 200 KiB of good rows, then bytes that are no text."""
    path = tmp_path / name
    good = "".join(f"Post {n},1\n" for n in range(4, 20_000)).encode()
    path.write_bytes(b"title,copies\nPost 1,1\nPost 2,2\n" + third.encode() + good + GARBAGE)
    path.chmod(0o600)
    return path


def test_a_bad_row_3_is_refused_before_the_rest_is_read(tmp_path: Path) -> None:
    path = bad_third_row_then_garbage(tmp_path, "Post 3,three\n")
    with pytest.raises(ParamInvalid) as caught:
        build(recipe(tmp_path), path)
    assert caught.value.message.startswith(f"{path} line 4: row 3: parameter 'copies'")


def test_a_malformed_row_3_is_refused_with_its_line(tmp_path: Path) -> None:
    path = bad_third_row_then_garbage(tmp_path, 'Post 3,1,"one too many"\n')
    with pytest.raises(UsageInvalid) as caught:
        build(recipe(tmp_path), path)
    assert "line 4: row 3 has more values than the header has names" in caught.value.message


def test_a_jsonl_row_3_holding_nan_is_refused_before_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    good = "".join(f'{{"title": "Post {n}"}}\n' for n in range(4, 20_000)).encode()
    head = b'{"title": "Post 1"}\n{"title": "Post 2"}\n{"title": "Post 3", "copies": NaN}\n'
    path.write_bytes(head + good + GARBAGE)
    with pytest.raises(UsageInvalid) as caught:
        build(recipe(tmp_path), path)
    assert caught.value.message == f"{path} line 3: row 3 holds NaN, which is not a number"


def test_garbage_is_refused_with_its_line_when_it_is_reached(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_bytes(b"title,copies\nPost 1,1\n" + GARBAGE)
    with pytest.raises(UsageInvalid, match="line 3 is not UTF-8 text"):
        build(recipe(tmp_path), path)


def test_a_rows_file_changed_after_its_check_is_refused_when_a_row_is_read(
    tmp_path: Path,
) -> None:
    path = rows_file(tmp_path, 5)
    request = build(recipe(tmp_path), path)
    with path.open("a", encoding="utf-8") as more:
        more.write("Post 6,1\n")
    with pytest.raises(FileChanged, match="changed since its rows were checked"):
        request.row_for(1)


def test_repeat_other_than_the_rows_counted_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageInvalid, match="--repeat 4 does not match the 5 rows"):
        build(recipe(tmp_path), rows_file(tmp_path, 5), repeat=4)


PUBLISH = """
name: publish-post
params:
  title: {type: string, required: true}
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
    verify_outcome:
      text: {target: {role: status}, equals: "Post published: {{ title }}"}
"""


@pytest.mark.browser
async def test_a_100000_row_batch_runs_its_first_rows_in_chromium(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    recipe_path = tmp_path / "publish-post.yaml"
    recipe_path.write_text(PUBLISH)
    path = tmp_path / "rows.csv"
    path.write_text("title\n" + "".join(f"Post {n}\n" for n in range(1, ROWS + 1)))
    request = build(recipe_path, path, base_url=site.base_url)
    stop = StopSignal()

    def after(result: IterationResult) -> None:
        if result.iteration == 2:  # the first two rows are enough: stop the batch there
            stop.request()

    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=host, journal=journal, stop=stop, on_result=after)
    assert outcome.status == "stopped"
    assert [(r.iteration, r.state) for r in outcome.results] == [(1, "verified"), (2, "verified")]
    assert site.submission_count("post") == 2
    assert [s.get("title") for s in site.submissions()] == ["Post 1", "Post 2"]
    detail = readers.get_run(tmp_path / "journal.db", outcome.run_id)
    assert detail.summary.total_iterations == ROWS


def test_the_checks_fingerprint_is_that_of_the_rows_read_again(tmp_path: Path) -> None:
    streamed = build(recipe(tmp_path), rows_file(tmp_path, 50))
    assert isinstance(streamed.rows, LazyRows)  # the digest the check took, not a new pass
    listed = replace(streamed, rows=list(streamed.rows))
    assert rows_fingerprint(streamed) == rows_fingerprint(listed)
