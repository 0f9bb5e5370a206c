"""--step, --pause-on-failure and --trace, driven without a person.

A pause waits in Playwright's Inspector by default. Here the injected ``pause`` records
where it was called (and what the page showed) and returns at once, which resumes the
run. The runs go through ``execute_run`` with a journal, as ``northstar run`` does, on the
session's browser with these debugging options.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from fixtures.site_server import FixtureSite
from northstar.browser.settings import BrowserSettings, DebugSettings, PausePoint
from northstar.composition import load_compiled
from northstar.journal import Journal
from northstar.plan.compiler import prepare
from northstar.recipe.loader import parse_recipe
from northstar.recipe.params import coerce_params
from northstar.run.execution import RunOutcome, RunRequest, execute_run
from northstar.run.repeat import RepeatOptions

pytestmark = pytest.mark.browser

POST = """
name: debug-post
params:
  title: {type: string, required: true}
  expected: {type: string, required: true}
tabs:
  admin: {start: "{{ base_url }}/posts/new"}
steps:
  - id: title
    tab: admin
    fill: {target: {label: Title}, value: "{{ title }}"}
  - id: publish
    tab: admin
    click: {target: {role: button, name: Publish, exact: true}}
    expect:
      - url: "**/posts?created=*"
  - id: confirm
    tab: admin
    timeout: 400
    verify_outcome: {text: {target: {role: status}, equals: "Post published: {{ expected }}"}}
"""


class Pauses:
    """Stands in for the person at the Inspector: notes each pause, then resumes."""

    def __init__(self) -> None:
        self.points: list[PausePoint] = []
        self.urls: list[str] = []

    async def __call__(self, page: Page, point: PausePoint) -> None:
        self.points.append(point)
        self.urls.append(page.url)


async def run(
    host: Any, site: FixtureSite, tmp_path: Path, debug: DebugSettings, pauses: Pauses, **rows: str
) -> tuple[RunOutcome, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "debug-post.yaml"
    path.write_text(POST)
    compiled = prepare(parse_recipe(POST, source=str(path)), source=str(path))
    values = coerce_params(compiled.recipe.params, rows)
    request = RunRequest(path, compiled, [values], RepeatOptions.of(1), base_url=site.base_url)
    view = host.sharing_browser(BrowserSettings(debug=debug, pause=pauses))
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=view, journal=journal)
    assert outcome.artifacts is not None
    return outcome, outcome.artifacts


async def test_step_pauses_before_every_step_on_its_tab(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    pauses = Pauses()
    outcome, _ = await run(
        host, site, tmp_path, DebugSettings(step=True), pauses, title="A", expected="A"
    )
    assert outcome.status == "verified"
    assert [(p.reason, p.step_id, p.tab) for p in pauses.points] == [
        ("step", "title", "admin"),
        ("step", "publish", "admin"),
        ("step", "confirm", "admin"),
    ]
    assert pauses.urls[0].endswith("/posts/new")  # paused with the step's page loaded
    assert "/posts?created=" in pauses.urls[2]


async def test_pause_on_failure_pauses_once_at_the_failing_step(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    pauses = Pauses()
    outcome, artifacts = await run(
        host,
        site,
        tmp_path,
        DebugSettings(pause_on_failure=True),
        pauses,
        title="A",
        expected="B",
    )
    assert outcome.status == "failed"
    (point,) = pauses.points
    assert (point.reason, point.step_id, point.tab) == ("failure", "confirm", "admin")
    assert point.message.startswith("EXPECTATION_FAILED")
    assert "/posts?created=" in pauses.urls[0]  # the page as the failure left it
    # The failure screenshot was taken before the pause, as for any failure.
    assert (artifacts / "iteration-0001-failure-admin.png").is_file()


async def test_retain_on_failure_keeps_the_trace_of_a_failed_iteration_only(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    debug = DebugSettings(trace="retain-on-failure")
    ok, ok_artifacts = await run(
        host, site, tmp_path / "ok", debug, Pauses(), title="A", expected="A"
    )
    bad, bad_artifacts = await run(
        host, site, tmp_path / "bad", debug, Pauses(), title="A", expected="B"
    )
    assert (ok.status, bad.status) == ("verified", "failed")
    assert not (ok_artifacts / "iteration-0001-trace.zip").exists()
    trace = bad_artifacts / "iteration-0001-trace.zip"
    assert trace.is_file()
    assert trace.read_bytes()[:2] == b"PK"  # a zip, as `playwright show-trace` opens


async def test_trace_on_keeps_a_verified_iterations_trace(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    outcome, artifacts = await run(
        host, site, tmp_path, DebugSettings(trace="on"), Pauses(), title="A", expected="A"
    )
    assert outcome.status == "verified"
    assert (artifacts / "iteration-0001-trace.zip").is_file()


async def run_file(
    host: Any, site: FixtureSite, tmp_path: Path, debug: DebugSettings, pauses: Pauses
) -> tuple[RunOutcome, Path, Path]:
    """Like ``run``, with the recipe loaded from its file (so steps know their lines)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "debug-post.yaml"
    path.write_text(POST)
    compiled = load_compiled(path)
    values = coerce_params(compiled.recipe.params, {"title": "A", "expected": "A"})
    request = RunRequest(path, compiled, [values], RepeatOptions.of(1), base_url=site.base_url)
    view = host.sharing_browser(BrowserSettings(debug=debug, pause=pauses))
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(request, host=view, journal=journal)
    assert outcome.artifacts is not None
    return outcome, outcome.artifacts, path


async def test_break_at_pauses_before_the_named_step_only_and_knows_its_recipe_line(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    pauses = Pauses()
    outcome, _, path = await run_file(
        host, site, tmp_path, DebugSettings(break_at=("publish",)), pauses
    )
    assert outcome.status == "verified"
    (point,) = pauses.points
    assert (point.step_id, point.kind, point.subject) == ("publish", "click", 'button "Publish"')
    assert point.source == f"{path}:{POST.splitlines().index('  - id: publish') + 1}"
    assert point.banner().splitlines()[:3] == [
        "paused before step publish (iteration 1, tab admin)",
        '  click button "Publish"',
        f"  at {point.source}",
    ]


def trace_calls(trace: Path) -> dict[str, tuple[str, str | None]]:
    """Each call of a trace: its id -> (method, the id of the group it sits in)."""
    with zipfile.ZipFile(trace) as archive:
        lines = archive.read("trace.trace").decode().splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    return {
        e["callId"]: (e.get("method", ""), e.get("parentId"))
        for e in events
        if e.get("type") == "before"
    }


def trace_groups(trace: Path) -> list[tuple[str, dict[str, Any]]]:
    """The groups a trace's viewer lists first: (title, location) of each outer group."""
    with zipfile.ZipFile(trace) as archive:
        lines = archive.read("trace.trace").decode().splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    return [
        (event.get("title", ""), event.get("stack", [{}])[0])
        for event in events
        if event.get("type") == "before"
        and event.get("method") == "tracingGroup"
        and event.get("parentId") is None  # a step's group, not the reads inside one
    ]


async def test_a_trace_lists_the_recipe_steps_as_groups_at_their_lines(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    outcome, artifacts, path = await run_file(
        host, site, tmp_path, DebugSettings(trace="on"), Pauses()
    )
    assert outcome.status == "verified"
    groups = trace_groups(artifacts / "iteration-0001-trace.zip")
    assert [title for title, _ in groups] == [
        "title (fill)",
        "publish (click)",
        "confirm (verify_outcome)",
    ]
    lines = POST.splitlines()
    assert [where.get("line") for _, where in groups] == [
        lines.index(f"  - id: {step}") + 1 for step in ("title", "publish", "confirm")
    ]
    assert {where.get("file") for _, where in groups} == {str(path.resolve())}
    # Northstar's own reads of the page sit in a folded group inside the step's group.
    calls = trace_calls(artifacts / "iteration-0001-trace.zip")
    top_level = [method for method, parent in calls.values() if parent is None]
    assert "ariaSnapshot" not in top_level
    steps = {c for c, (method, parent) in calls.items() if method == "tracingGroup" and not parent}
    in_steps = [method for method, parent in calls.values() if parent in steps]
    assert in_steps.count("fill") == in_steps.count("click") == 1
    assert "ariaSnapshot" not in in_steps  # not beside the step's action: one level down
