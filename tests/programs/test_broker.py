"""Programs run by the broker in real headless Chromium against the fixture site."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.cli._inputs import build_request
from northstar.errors import DefinitionChanged, ProgramIterationNotVerified
from northstar.journal import Journal
from northstar.programs import ProgramBroker, load_program, program_compiled
from tests.programs.conftest import run_program_file, write_program

pytestmark = pytest.mark.browser

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "programs" / "file_orders.py"
PUBLISH = '{"role": "button", "name": "Publish"}'


def _outputs(journal: Journal, run_id: str) -> dict[tuple[int, str], str]:
    with sqlite3.connect(journal.path) as db:
        rows = db.execute(
            "SELECT iteration, name, value FROM outputs WHERE run_id = ?", (run_id,)
        ).fetchall()
    return {(number, name): value for number, name, value in rows}


def _iterations(journal: Journal, run_id: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(journal.path) as db:
        return db.execute(
            "SELECT number, state, reason_code, reason, model_calls FROM iterations "
            "WHERE run_id = ? ORDER BY number",
            (run_id,),
        ).fetchall()


async def test_the_example_files_every_row_of_the_table_three_times(
    host: Any, site: FixtureSite, journal: Journal
) -> None:
    outcome = await run_program_file(EXAMPLE, host, journal, site.base_url, repeat=3)
    assert outcome.status == "verified", outcome.results
    assert len(outcome.summary.verified) == 3
    titles = [s["title"] for s in site.submissions()]
    assert titles == [
        f"{order} for {name} #{n}"
        for n in (1, 2, 3)
        for order, name in (("A-1", "Alice"), ("A-2", "Bob"), ("A-3", "Carol"))
    ]
    assert _outputs(journal, outcome.run_id) == {(n, "filed"): "3" for n in (1, 2, 3)}
    # Every call is a journaled step with its evidence: 3 rows x (goto, fill, submit with
    # its expectation as part of its step, as in a recipe) and the two done_when checks.
    assert [len(r.steps) for r in outcome.results] == [11, 11, 11]
    submits = [s for s in outcome.results[0].steps if s.step_id.startswith("submit.")]
    assert [len(s.evidence) for s in submits] == [2, 2, 2]  # the click and the held check
    assert outcome.summary.evidence_count == sum(r.evidence_count for r in outcome.results) > 0
    assert outcome.summary.model_calls is None  # the example reports none: unknown, never 0
    assert [row[4] for row in _iterations(journal, outcome.run_id)] == [None, None, None]


async def test_exit_zero_without_complete_is_not_verified_and_stops_the_run(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    program = write_program(tmp_path, 'await nx.tab("site").fill({"label": "Title"}, "draft")')
    outcome = await run_program_file(program, host, journal, site.base_url, repeat=2)
    assert isinstance(outcome.error, ProgramIterationNotVerified)
    assert outcome.status == "failed"
    [(number, state, code, reason, _)] = _iterations(journal, outcome.run_id)
    assert (number, state, code) == (1, "failed", "PROGRAM_ITERATION_NOT_VERIFIED")
    assert "no execution result" in reason


async def test_the_same_submission_twice_is_dispatched_once_and_other_inputs_conflict(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    body = f"""
site = nx.tab("site")
await site.fill({{"label": "Title"}}, "Once")
first = await site.click({PUBLISH}, submit=True, key="publish")
again = await site.click({PUBLISH}, submit=True, key="publish")
await site.goto("/posts/new")
try:
    await site.fill({{"label": "Title"}}, "Other", submit=True, key="publish")
except Exception as exc:
    conflict = exc.code
await nx.output("dispatches", [first["dispatched"], again["dispatched"]])
await nx.output("conflict", conflict)
await nx.complete()
"""
    declaration = (
        'PROGRAM = {"name": "twice", "outputs": ["dispatches", "conflict"], '
        '"tabs": {"site": {"start": "{{ base_url }}/posts/new"}}}'
    )
    program = write_program(tmp_path, body, declaration=declaration)
    outcome = await run_program_file(program, host, journal, site.base_url)
    assert outcome.status == "verified", outcome.results
    assert site.submission_count("post") == 1
    outputs = _outputs(journal, outcome.run_id)
    assert outputs[(1, "dispatches")] == "[True, False]"
    assert outputs[(1, "conflict")] == "IDEMPOTENCY_CONFLICT"


async def test_leaving_the_tab_roles_origins_is_blocked(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    body = """
try:
    await nx.tab("site").goto("http://localhost:9/elsewhere")
except Exception as exc:
    await nx.output("blocked", exc.code)
await nx.complete()
"""
    declaration = (
        'PROGRAM = {"name": "away", "outputs": ["blocked"], '
        '"tabs": {"site": {"start": "{{ base_url }}/posts/new"}}}'
    )
    program = write_program(tmp_path, body, declaration=declaration)
    outcome = await run_program_file(program, host, journal, site.base_url)
    assert _outputs(journal, outcome.run_id) == {(1, "blocked"): "ORIGIN_BLOCKED"}


async def test_a_call_with_another_runs_credential_is_refused(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    other_id, other_credential = journal.create_run(
        recipe_path="other",
        recipe_name="other",
        definition_hash="0",
        project="default",
        profile="",
        params_fingerprint="",
        total_iterations=1,
        options={},
    )
    body = """
import json, os
reader, writer = await asyncio.open_unix_connection(os.environ["NORTHSTAR_PROGRAM_SOCKET"])
answers = []
for run_id, credential in [(OTHER, CREDENTIAL), (os.environ["NORTHSTAR_EXECUTION_ID"], CREDENTIAL)]:
    request = {"id": 1, "op": "act", "execution_id": run_id, "credential": credential,
               "args": {"tab": "site", "action": "click", "submit": True, "key": "k",
                        "target": {"role": "button", "name": "Publish"}}}
    writer.write(json.dumps(request).encode() + b"\\n")
    answers.append(json.loads(await reader.readline())["error"]["code"])
await nx.output("codes", ",".join(answers))
await nx.complete()
"""
    declaration = (
        f"import asyncio\nOTHER = {other_id!r}\nCREDENTIAL = {other_credential!r}\n"
        'PROGRAM = {"name": "thief", "outputs": ["codes"], '
        '"tabs": {"site": {"start": "{{ base_url }}/posts/new"}}}'
    )
    program = write_program(tmp_path, body, declaration=declaration)
    outcome = await run_program_file(program, host, journal, site.base_url)
    assert outcome.status == "verified", outcome.results
    codes = _outputs(journal, outcome.run_id)[(1, "codes")]
    assert codes == "CREDENTIALS_INVALID,CREDENTIALS_INVALID"
    assert site.submission_count() == 0


async def test_a_program_edited_between_iterations_stops_before_sending_anything(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    helper = tmp_path / "titles.py"
    helper.write_text("TITLE = 'Edited'\n")
    body = f"""
from titles import TITLE
site = nx.tab("site")
await site.fill({{"label": "Title"}}, f"{{TITLE}} {{nx.iteration}}")
await site.click({PUBLISH}, submit=True)
with open({str(helper)!r}, "a") as file:  # the program's own code changes under the run
    file.write("# edited\\n")
await nx.complete()
"""
    declaration = (
        "import titles\n"
        'PROGRAM = {"name": "edited", "tabs": {"site": {"start": "{{ base_url }}/posts/new"}}}'
    )
    program = write_program(tmp_path, body, declaration=declaration)
    outcome = await run_program_file(program, host, journal, site.base_url, repeat=3)
    assert isinstance(outcome.error, DefinitionChanged)
    assert outcome.status == "failed"
    assert [s["title"] for s in site.submissions()] == ["Edited 1"]
    assert [row[:2] for row in _iterations(journal, outcome.run_id)] == [(1, "verified")]


async def test_reported_model_calls_are_summed(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    body = "await nx.report_model_calls(1, tokens=50)\nawait nx.report_model_calls(1)\n"
    body += "await nx.complete()"
    program = write_program(tmp_path, body)
    outcome = await run_program_file(program, host, journal, site.base_url, repeat=2)
    assert outcome.status == "verified"
    assert outcome.summary.model_calls == 4
    assert [row[4] for row in _iterations(journal, outcome.run_id)] == [2, 2]


SECRET = "pw-program-5e1f-not-for-logs"


async def test_a_secret_parameter_stays_out_of_the_journal_and_the_program_log(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    check = {"value": {"target": {"label": "Password"}, "equals": SECRET}}
    body = f"""
print("typing", nx.params["password"])
await nx.tab("site").fill({{"label": "Password"}}, nx.params["password"])
assert await nx.tab("site").verify({check!r})
await nx.complete()
"""
    declaration = (
        'PROGRAM = {"name": "secret", "params": {"password": {"type": "string", "secret": True}},'
        ' "tabs": {"site": {"start": "{{ base_url }}/login"}}}'
    )
    program = write_program(tmp_path, body, declaration=declaration)
    params = {"password": SECRET}
    outcome = await run_program_file(program, host, journal, site.base_url, params=params)
    assert outcome.status == "verified", outcome.results
    log = next(tmp_path.rglob("program-1.log")).read_text()
    assert "typing [redacted]" in log
    for path in [p for p in tmp_path.rglob("*") if p.is_file() and p != program]:
        assert SECRET.encode() not in path.read_bytes(), path


async def test_a_rows_file_runs_one_iteration_per_row(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    body = f"""
await nx.tab("site").fill({{"label": "Title"}}, nx.params["title"])
await nx.tab("site").click({PUBLISH}, submit=True)
await nx.complete()
"""
    declaration = (
        'PROGRAM = {"name": "rows", "params": {"title": {"type": "string", "required": True}},'
        ' "tabs": {"site": {"start": "{{ base_url }}/posts/new"}}}'
    )
    program = write_program(tmp_path, body, declaration=declaration)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"title": "Row one"}\n{"title": "Row two"}\n')
    options = {"recipe": str(program), "params": (), "params_file": str(rows)}
    request = build_request({**options, "base_url": site.base_url}, load=program_compiled)
    declared, _ = load_program(program)
    outcome = await ProgramBroker(request, declared, host=host, journal=journal).run()
    assert outcome.status == "verified", outcome.results
    assert [s["title"] for s in site.submissions()] == ["Row one", "Row two"]
