"""When a stored recipe breaks, end to end: run, diagnose over MCP, propose, review, apply.

A recipe verified against the fixture's contact form stops with ``TARGET_MISSING`` on the
variant of the page whose button was renamed (``/form/renamed``). ``diagnose_run``, over
the SDK's client and a real ``northstar mcp`` process, names the candidates and what
changed since the step last passed; ``propose_fix`` stores a diff that changes nothing
until a person runs ``northstar review --apply``; the fixed recipe then verifies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from fixtures.site_server import FixtureSite
from northstar.composition import load_compiled
from tests.cli.test_cli_run import northstar, one_error_line
from tests.mcp.conftest import ENTRY, child_env, data, refused

pytestmark = pytest.mark.browser

RECIPE = """\
name: send-contact
version: 1
description: Type a name in the contact form and send it.
params:
  name: {type: string, required: true}
  page: {type: string, default: /form}
tabs:
  site:
    start: "{{ base_url }}{{ page }}"
steps:
  - id: name
    tab: site
    fill: {target: {label: Name}, value: "{{ name }}"}
  - id: send
    tab: site
    click: {target: {role: button, name: Send}}
    effect: submit
    expect:
      - visible: {role: heading, name: Thank you}
"""
FIXED = RECIPE.replace("name: Send}", "name: Send message}")


def run_recipe(tmp_path: Path, recipe: Path, site: FixtureSite, page: str) -> tuple[int, str]:
    proc = northstar(
        "run", str(recipe), "--base-url", site.base_url, "-p", "name=Ada", "-p", f"page={page}",
        "--json", cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)["run_id"]


def mcp_server(tmp_path: Path) -> StdioServerParameters:
    args = ["-c", ENTRY, "mcp", "--recipes", str(tmp_path / "recipes")]
    args += ["--journal", str(tmp_path / "journal.db")]
    import sys

    return StdioServerParameters(
        command=sys.executable, args=args, env=child_env(), cwd=str(tmp_path)
    )


async def test_a_broken_recipe_is_diagnosed_fixed_by_review_and_verifies(
    site: FixtureSite, tmp_path: Path
) -> None:
    (tmp_path / "recipes").mkdir()
    recipe = tmp_path / "recipes" / "send-contact.yaml"
    recipe.write_text(RECIPE, encoding="utf-8")
    assert run_recipe(tmp_path, recipe, site, "/form")[0] == 0  # verified: baselines kept
    code, broken = run_recipe(tmp_path, recipe, site, "/form/renamed")
    assert code == 1
    assert site.submission_count() == 1  # the broken run sent nothing

    async with Client(mcp_server(tmp_path)) as client:
        found = data(await client.call_tool("diagnose_run", {"run_id": broken}))
        assert found["failures"] == [
            {"iteration": 1, "reason_code": "TARGET_MISSING", "failing_step": "send"}
        ]
        [diagnosis] = found["diagnoses"]
        assert (diagnosis["step"], diagnosis["code"]) == ("send", "TARGET_MISSING")
        assert diagnosis["target"] == 'button "Send"'
        first = diagnosis["candidates"][0]
        assert {k: first[k] for k in ("role", "name", "same_role", "closeness")} == {
            "role": "button", "name": "Send message", "same_role": True, "closeness": 0.8,
        }  # fmt: skip
        assert (first["same_form"], first["submits_elsewhere"]) == (True, False)
        assert diagnosis["submitted_to"] == "POST /form"
        assert 'button "Send message"' in diagnosis["observation"]
        assert "[ref=" not in diagnosis["observation"]  # stale once the run ended
        changes = diagnosis["changes"].splitlines()
        assert "changes since the step last passed" in changes[1]
        assert '+ button "Send message"' in changes
        assert '- button "Send"' in changes

        bad = await client.call_tool(
            "propose_fix", {"run_id": broken, "recipe_text": FIXED.replace("steps:", "stepz:")}
        )
        refused(bad, "RECIPE_INVALID")
        params = {"name": "Ada", "page": "/form/renamed"}  # the run's, given again
        proposed = data(
            await client.call_tool(
                "propose_fix", {"run_id": broken, "recipe_text": FIXED, "params": params}
            )
        )
        assert proposed["stored"] is True
        assert proposed["replay"]["stopped_before"] == "send"
    assert (proposed["lines_added"], proposed["lines_removed"]) == (1, 1)
    assert "+    click: {target: {role: button, name: Send message}}" in proposed["diff"]
    assert recipe.read_text(encoding="utf-8") == RECIPE  # nothing applied by the agent

    listed = northstar("review", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    [row] = listed.stdout.splitlines()[1:]
    assert row.startswith(f"{proposed['proposal_id']}  {broken}  {recipe}  ")
    assert "+1 -1  not applied" in row
    shown = northstar("review", "--show", str(proposed["proposal_id"]), cwd=tmp_path)
    assert shown.stdout == proposed["diff"]
    assert recipe.read_text(encoding="utf-8") == RECIPE

    shown_run = northstar("show", broken, cwd=tmp_path)
    assert "diagnosis: iteration 1, step send [site] TARGET_MISSING" in shown_run.stdout
    assert 'candidates: button "Send message" (0.8)' in shown_run.stdout

    applied = northstar("review", "--apply", str(proposed["proposal_id"]), cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr
    new_hash = load_compiled(recipe).recipe_hash
    assert applied.stdout.startswith(proposed["diff"])
    assert f"new definition hash {new_hash}" in applied.stdout
    assert recipe.read_text(encoding="utf-8") == FIXED
    again = northstar("review", "--apply", str(proposed["proposal_id"]), cwd=tmp_path)
    one_error_line(again, "FIX_OUTDATED")  # the file is no longer what the diff was made on

    assert run_recipe(tmp_path, recipe, site, "/form/renamed")[0] == 0
    assert site.submission_count() == 2
