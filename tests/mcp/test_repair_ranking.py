"""A repair that ranks right: on a changed page with a decoy that submits elsewhere.

A recipe verified on ``/repair/form`` ("Submit request", posting to ``/repair/request``)
breaks on ``/repair/form/changed``, where the button is "Send request" and a feedback
form above it, posting elsewhere, has "Submit feedback" (the closer name). Over the SDK's
client and a real ``northstar mcp``: ``diagnose_run`` ranks "Send request" first and flags
the decoy; ``propose_fix`` replays the fix dry before storing it (a fix that picks the
decoy does not replay and is not stored); after ``northstar review --apply`` the fixed
recipe verifies, with one request and no feedback sent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import northstar
from tests.mcp.conftest import data
from tests.mcp.test_diagnose import mcp_server, run_recipe

pytestmark = pytest.mark.browser

RECIPE = """\
name: ask-support
version: 1
description: Send a support request.
params:
  name: {type: string, default: Printer jam}
  page: {type: string, default: /repair/form/changed}
tabs:
  site:
    start: "{{ base_url }}{{ page }}"
steps:
  - id: subject
    tab: site
    fill: {target: {label: Subject}, value: "{{ name }}"}
  - id: send
    tab: site
    click: {target: {role: button, name: Submit request}}
    effect: submit
    expect:
      - visible: {role: heading, name: Request received}
"""
FIXED = RECIPE.replace("name: Submit request}", "name: Send request}")
DECOY = RECIPE.replace("name: Submit request}", "name: Submit feedback}")


async def test_the_right_candidate_is_first_the_decoy_is_flagged_and_the_fix_verifies(
    site: FixtureSite, tmp_path: Path
) -> None:
    (tmp_path / "recipes").mkdir()
    recipe = tmp_path / "recipes" / "ask-support.yaml"
    recipe.write_text(RECIPE, encoding="utf-8")
    assert run_recipe(tmp_path, recipe, site, "/repair/form")[0] == 0  # baseline kept
    code, broken = run_recipe(tmp_path, recipe, site, "/repair/form/changed")
    assert code == 1
    assert site.submission_count("request") == 1

    async with Client(mcp_server(tmp_path)) as client:
        found = data(await client.call_tool("diagnose_run", {"run_id": broken}))
        [diagnosis] = found["diagnoses"]
        assert diagnosis["code"] == "TARGET_MISSING"
        assert diagnosis["submitted_to"] == "POST /repair/request"
        ranked = [(c["name"], c.get("submits_elsewhere")) for c in diagnosis["candidates"]]
        assert ranked[0] == ("Send request", False)
        assert ("Submit feedback", True) in ranked  # flagged, and never first

        decoy = data(
            await client.call_tool("propose_fix", {"run_id": broken, "recipe_text": DECOY})
        )
        assert decoy["stored"] is False  # it resolves, but would send the feedback form
        assert decoy["replay"]["submits_to"] == "POST /repair/feedback"
        proposed = data(
            await client.call_tool("propose_fix", {"run_id": broken, "recipe_text": FIXED})
        )
    assert proposed["stored"] is True
    assert proposed["replay"]["replays"] is True
    assert proposed["replay"]["stopped_before"] == "send"
    assert site.submission_count("feedback") == 0  # no dry replay sent anything
    assert site.submission_count("request") == 1

    applied = northstar("review", "--apply", str(proposed["proposal_id"]), cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert run_recipe(tmp_path, recipe, site, "/repair/form/changed")[0] == 0
    assert (site.submission_count("request"), site.submission_count("feedback")) == (2, 0)
