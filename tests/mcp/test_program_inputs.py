"""The server's decisions without a browser: descriptions, inputs, access, error lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from northstar.cli._output import format_error
from northstar.composition import load_compiled
from northstar.errors import (
    CredentialsInvalid,
    ParamInvalid,
    ParamMissing,
    ProgramIterationNotVerified,
    RecipeInvalid,
    RepeatOptionsInvalid,
    UsageInvalid,
)
from northstar.journal import Journal
from northstar.mcp.catalogue import read_catalogue
from northstar.mcp.descriptions import param_spec, program_detail, step_line
from northstar.mcp.http_access import (
    StaticTokenVerifier,
    parse_http_address,
    server_token,
)
from northstar.mcp.program_tools import outcome_result
from northstar.mcp.requests import ProgramInputs, program_request
from northstar.mcp.tool_results import error_line, refusal
from northstar.recipe.model import Param
from northstar.results import IterationResult, IterationState
from northstar.run.execution import RunOutcome
from northstar.run.repeat import RepeatSummary
from tests.conftest import RECIPES
from tests.journal.helpers import create_run

CONTACT = RECIPES / "contact-form.yaml"
BASE = "http://127.0.0.1:9"


def contact_request(**inputs: object):
    program = read_catalogue([RECIPES]).find("contact-form")
    return program_request(program, ProgramInputs(**inputs), folders=[RECIPES], project="p")  # type: ignore[arg-type]


def test_a_secret_parameter_shows_no_default() -> None:
    secret = Param(type="string", secret=True, default="hunter2-not-shown")
    assert param_spec(secret) == {"type": "string", "required": False, "secret": True}
    assert param_spec(Param(type="integer", default=3)) == {
        "type": "integer",
        "required": False,
        "default": 3,
    }


def test_a_step_is_one_line_with_its_submit_and_expectations() -> None:
    recipe = load_compiled(CONTACT).recipe
    assert step_line(recipe.steps[0]) == "name [site] fill label \"Name\" = '{{ name }}'"
    assert step_line(recipe.steps[-1]) == (
        'send [site] click button "Send"; submit (at most once); expect '
        "url '**/form/thanks?id=*', visible heading \"Thank you\", "
        "text of text \"received from\" (substring, any case) {'contains': '{{ name }}'}"
    )
    publish = load_compiled(RECIPES / "publish-post.yaml").recipe.steps[1]
    assert "submit (at most once; reconcile probe)" in step_line(publish)


def test_every_recipe_of_the_project_is_described() -> None:
    catalogue = read_catalogue([RECIPES])
    assert catalogue.problems == []
    for program in catalogue.programs.values():
        detail = program_detail(program.compiled, program.path)
        assert len(detail["steps"]) == detail["step_count"]
        assert detail["definition_hash"] == program.compiled.recipe_hash


def test_bad_and_duplicate_recipes_are_problems_not_failures(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(CONTACT.read_text())
    (tmp_path / "b.yaml").write_text(CONTACT.read_text())
    (tmp_path / "c.yaml").write_text("name: broken\ntabs: {}\nsteps: []\n")
    (tmp_path / "notes.txt").write_text("not a recipe")
    catalogue = read_catalogue([tmp_path])
    assert list(catalogue.programs) == ["contact-form"]
    assert catalogue.programs["contact-form"].path == tmp_path / "a.yaml"
    problems = {p.path.name: p.error for p in catalogue.problems}
    assert set(problems) == {"b.yaml", "c.yaml"}
    assert isinstance(problems["b.yaml"], UsageInvalid)
    assert isinstance(problems["c.yaml"], RecipeInvalid)


def test_inputs_are_checked_like_the_cli() -> None:
    request = contact_request(params={"name": "Ada"}, repeat=3, interval=2, base_url=BASE)
    assert (request.repeat.count, request.repeat.interval_s, request.project) == (3, 2, "p")
    rows = contact_request(rows=[{"name": "A"}, {"name": "B"}], base_url=BASE)
    assert [row["name"] for row in rows.rows] == ["A", "B"]
    assert rows.repeat.count == 2
    with pytest.raises(RepeatOptionsInvalid, match="from 1 to 100000, got 0"):
        contact_request(params={"name": "Ada"}, repeat=0, base_url=BASE)
    with pytest.raises(RepeatOptionsInvalid, match="interval"):
        contact_request(params={"name": "Ada"}, interval=86_401, base_url=BASE)
    with pytest.raises(ParamMissing, match="row 2: parameter 'name' is required"):
        contact_request(rows=[{"name": "A"}, {}], base_url=BASE)
    with pytest.raises(UsageInvalid, match="repeat 3 does not match the 2 rows"):
        contact_request(rows=[{"name": "A"}, {"name": "B"}], repeat=3, base_url=BASE)
    with pytest.raises(ParamMissing, match="base"):
        contact_request(params={"name": "Ada"})


def test_a_file_parameter_must_be_inside_the_recipe_folders() -> None:
    inside = contact_request(
        params={"name": "Ada", "attachment": str(RECIPES / "files" / "notes.txt")}, base_url=BASE
    )
    assert inside.rows[0]["attachment"] == str((RECIPES / "files" / "notes.txt").resolve())
    with pytest.raises(ParamInvalid, match="inside the server's recipe folders"):
        contact_request(params={"name": "Ada", "attachment": __file__}, base_url=BASE)


def test_http_listens_on_loopback_unless_asked() -> None:
    assert parse_http_address("127.0.0.1:0").port == 0
    assert parse_http_address("8765").host == "127.0.0.1"
    assert parse_http_address("[::1]:8765").url("/mcp") == "http://[::1]:8765/mcp"
    with pytest.raises(UsageInvalid, match="other machines"):
        parse_http_address("0.0.0.0:8765")
    assert parse_http_address("0.0.0.0:8765", allow_remote=True).host == "0.0.0.0"
    with pytest.raises(UsageInvalid, match="not HOST:PORT"):
        parse_http_address("127.0.0.1:http")


async def test_the_token_is_static_and_compared_exactly() -> None:
    token, generated = server_token({})
    assert generated
    assert len(token) >= 32
    assert server_token({"NORTHSTAR_MCP_TOKEN": "x" * 20}) == ("x" * 20, False)
    with pytest.raises(UsageInvalid, match="shorter"):
        server_token({"NORTHSTAR_MCP_TOKEN": "short"})
    verifier = StaticTokenVerifier(token)
    assert await verifier.verify_token(token) is not None
    assert await verifier.verify_token(token + "x") is None
    assert await verifier.verify_token("") is None


def test_a_refusal_is_the_cli_error_line() -> None:
    error = CredentialsInvalid("the run's credential is missing or wrong", run_id="r-1")
    located = RecipeInvalid("bad", file="x.yaml", line=3, column=2)
    for each in (error, located):
        assert error_line(each) == format_error(each)
    result = refusal(error)
    assert result.is_error
    assert result.content[0].text == format_error(error)  # type: ignore[union-attr]
    assert result.structured_content == {"error": error.to_dict()}


def test_a_run_that_stopped_short_is_a_tool_error_with_its_ending_and_the_whole_run(
    tmp_path: Path,
) -> None:
    verified = IterationResult(1, IterationState.VERIFIED, outputs={"id": "7"}, model_calls=0)
    failed = IterationResult(
        2,
        IterationState.FAILED,
        reason_code="EXPECTATION_FAILED",
        reason="no heading",
        failing_step="send",
        model_calls=0,
    )
    journal_path = tmp_path / "journal.db"
    with Journal.open(journal_path) as journal:
        run_id, credential = create_run(journal, total=3)
        for result in (verified, failed):
            journal.start_iteration(run_id, result.iteration, params_fingerprint="p")
            journal.finish_iteration(run_id, result)
        journal.finish_run(run_id, "failed")
    error = ProgramIterationNotVerified("iteration 2 was not verified", iteration=2)
    summary = RepeatSummary.of(3, [verified])
    outcome = RunOutcome(run_id, credential, "failed", summary, [verified, failed], error)
    result = outcome_result(outcome, journal_path)
    assert result.is_error
    lines = result.content[0].text.splitlines()  # type: ignore[union-attr]
    assert lines[0] == (
        f"run {run_id}: failed, 1 of 3 iterations verified (2 recorded: 1 verified, 1 failed)"
    )
    assert lines[1] == "iteration 2 of 3 NOT verified (failed): EXPECTATION_FAILED at 'send'"
    whole = json.loads(result.content[1].text)  # type: ignore[union-attr]
    assert (whole["run_id"], whole["credential"], whole["verified"]) == (run_id, credential, 1)
    assert (whole["requested"], whole["recorded"], whole["code"]) == (3, 2, "EXPECTATION_FAILED")
    assert whole["iterations"][1] == {
        "iteration": 2,
        "verified": False,
        "state": "failed",
        "outputs": {},
        "evidence_count": 0,
        "model_calls": 0,
        "reason_code": "EXPECTATION_FAILED",
        "reason": "no heading",
        "failing_step": "send",
    }
    assert result.structured_content is not None
    assert result.structured_content["error"]["code"] == "PROGRAM_ITERATION_NOT_VERIFIED"
