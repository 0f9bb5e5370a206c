"""The report of a long run with one failure, opened in headless Chromium.

A 20-row run against the fixture site fails at row 17 (the fail-stop leaves 18–20 never
started). The page must open the failed iteration first, keep the verified ones closed,
link the screenshot to its full-size file, list the iterations that never started, and
stay short: ``document.body.scrollHeight`` under ``MAX_HEIGHT_PX`` at a 1000x800 viewport.
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

# Measured: 5,208 px before (every iteration a full card, plus a table), 1,717 px now.
MAX_HEIGHT_PX = 2000

HEADING = """
name: heading-check
params:
  heading: {type: string, required: true}
tabs:
  admin: {start: "{{ base_url }}/posts/new"}
steps:
  - id: heading
    tab: admin
    timeout: 5000  # row 17 waits it out once; the passing rows must not, on a busy machine
    verify_outcome: {visible: {role: heading, name: "{{ heading }}", exact: true}}
"""
FAILING_ROW = 17


async def a_long_run_with_one_failure(host: Any, site: FixtureSite, tmp_path: Path) -> Path:
    """Run 20 rows (row 17 expects a heading the page does not have); the report's path."""
    path = tmp_path / "heading-check.yaml"
    path.write_text(HEADING)
    compiled = prepare(parse_recipe(HEADING, source=str(path)), source=str(path))
    rows = [{"heading": "New post"} for _ in range(20)]
    rows[FAILING_ROW - 1] = {"heading": "Old post"}
    typed = validate_rows(compiled.recipe.params, rows, {})
    request = RunRequest(path, compiled, typed, RepeatOptions.of(20), base_url=site.base_url)
    journal_path = tmp_path / "journal.db"
    with Journal.open(journal_path) as journal:
        outcome = await execute_run(request, host=host, journal=journal)
    assert [r.state.value for r in outcome.results] == ["verified"] * 16 + ["failed"]
    out = tmp_path / "pages" / "report.html"
    written = CliRunner().invoke(
        cli, ["report", outcome.run_id, "--journal", str(journal_path), "--out", str(out)]
    )
    assert written.exit_code == 0, written.output
    return out


async def test_a_long_run_report_opens_the_failure_first_and_stays_short(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    report = await a_long_run_with_one_failure(host, site, tmp_path)
    context = await host.browser.new_context(viewport={"width": 1000, "height": 800})
    try:
        page = await context.new_page()
        await page.goto(report.as_uri())
        cards = page.locator("details.iteration")
        await expect(cards).to_have_count(17)
        await expect(cards.first).to_have_attribute("id", f"iteration-{FAILING_ROW}")
        await expect(page.locator("details.iteration[open]")).to_have_count(1)
        await expect(page.locator("details.iteration[open]")).to_have_attribute(
            "data-verdict", "failed"
        )
        await expect(page.locator("#iteration-1 table.steps")).to_be_hidden()  # collapsed
        await expect(page.locator(".not-started")).to_have_text(
            "Never started: iterations 18–20 (3 of 20); the run stopped first."
        )
        link = cards.first.locator("figure.screenshot a")
        href = await link.get_attribute("href")
        assert href is not None
        assert (report.parent / href).resolve().is_file()  # the full-size PNG, relative link
        await expect(link.locator("img")).to_be_visible()
        height = await page.evaluate("document.body.scrollHeight")
        assert height < MAX_HEIGHT_PX, height
        await page.locator("#iteration-1 > summary").click()  # a closed card opens on click
        await expect(page.locator("#iteration-1 table.steps")).to_be_visible()
    finally:
        await context.close()


async def test_the_filter_and_the_search_narrow_the_iterations_shown(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    report = await a_long_run_with_one_failure(host, site, tmp_path)
    context = await host.browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(report.as_uri())
        visible = page.locator("details.iteration:visible")
        await expect(visible).to_have_count(17)
        await expect(page.locator("form.filter output")).to_have_text("showing 17 of 17")
        await page.get_by_role("radio", name="failed").check()
        await expect(visible).to_have_count(1)
        await expect(visible).to_have_attribute("id", f"iteration-{FAILING_ROW}")
        await page.get_by_role("radio", name="verified").check()
        await expect(visible).to_have_count(16)
        await page.get_by_role("searchbox").fill("Old post")  # no verified row has it
        await expect(visible).to_have_count(0)
        await expect(page.locator(".none-shown")).to_be_visible()
        await page.get_by_role("radio", name="all").check()
        await expect(visible).to_have_count(1)  # the search alone: the row that failed
        await expect(visible).to_have_attribute("id", f"iteration-{FAILING_ROW}")
        await page.get_by_role("searchbox").fill("")
        await expect(visible).to_have_count(17)
    finally:
        await context.close()
