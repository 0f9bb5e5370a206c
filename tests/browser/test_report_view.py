"""``northstar report`` as a person sees it: the page opened in headless Chromium.

A two-iteration run against the fixture site (the second fails and leaves a failure
screenshot) is written as a report by the CLI command; the page must show each
iteration's verdict and display its screenshot from the page itself (a data: URI).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from playwright.async_api import expect

from fixtures.site_server import FixtureSite
from northstar.cli import cli
from northstar.journal import Journal
from northstar.plan.compiler import prepare
from northstar.recipe.inputs import validate_rows
from northstar.recipe.loader import parse_recipe
from northstar.run.execution import RunRequest, execute_run
from northstar.run.repeat import RepeatOptions

pytestmark = pytest.mark.browser

POST = """
name: report-post
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


async def a_run_with_a_failure(host: Any, site: FixtureSite, tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "report-post.yaml"
    path.write_text(POST)
    compiled = prepare(parse_recipe(POST, source=str(path)), source=str(path))
    rows = [{"title": "One", "expected": "One"}, {"title": "Two", "expected": "Ten"}]
    typed = validate_rows(compiled.recipe.params, rows, {})
    request = RunRequest(path, compiled, typed, RepeatOptions.of(2), base_url=site.base_url)
    journal_path = tmp_path / "journal.db"
    with Journal.open(journal_path) as journal:
        outcome = await execute_run(request, host=host, journal=journal)
    assert [r.state.value for r in outcome.results] == ["verified", "failed"]
    return journal_path, outcome.run_id


async def test_the_report_shows_each_verdict_and_its_screenshots(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    journal_path, run_id = await a_run_with_a_failure(host, site, tmp_path)
    out = tmp_path / "report.html"
    written = CliRunner().invoke(
        cli, ["report", run_id, "--journal", str(journal_path), "--out", str(out)]
    )
    assert written.exit_code == 0, written.output
    assert written.output.strip() == str(out)

    context = await host.browser.new_context(offline=True)  # nothing may come from outside
    try:
        page = await context.new_page()
        await page.goto(out.as_uri())
        await expect(page.locator(".run-status")).to_have_text("failed")
        first, second = page.locator("#iteration-1"), page.locator("#iteration-2")
        await expect(first.locator("h3 .badge")).to_have_text("verified")
        await expect(second.locator("h3 .badge")).to_have_text("failed")
        await expect(second.locator(".reason")).to_contain_text(
            "EXPECTATION_FAILED at step confirm"
        )
        await expect(first.locator("img")).to_have_count(0)
        shot = second.locator("figure.screenshot img")
        await expect(shot).to_have_count(1)
        await expect(second.locator("figcaption")).to_have_text("failure screenshot, tab admin")
        width = await shot.evaluate("img => img.complete ? img.naturalWidth : 0")
        assert width > 100  # the embedded PNG decoded and displays
        await expect(second.locator("table.steps tr")).to_have_count(4)  # header + 3 steps
    finally:
        await context.close()
