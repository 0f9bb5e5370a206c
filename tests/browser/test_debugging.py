"""--step, --pause-on-failure and --trace, driven without a person.

A pause waits in Playwright's Inspector by default. Here the injected ``pause`` records
where it was called (and what the page showed) and returns at once, which resumes the
run. The runs go through ``execute_run`` with a journal, as ``northstar run`` does, on the
session's browser with these debugging options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from fixtures.site_server import FixtureSite
from northstar.browser.settings import BrowserSettings, DebugSettings, PausePoint
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
