"""The table of endings and the lines every front end prints from it, as pure logic.

The endings driven for real (a browser, a changed file, a killed browser, Ctrl-C) are in
``tests/cli/test_run_endings.py``; here the rules are checked over plain rows and
reasons: which row a code or status leads to, that exit statuses differ where a person
must act differently, that one more row needs no change to the renderer, and that the
documentation's table is the code's.
"""

from __future__ import annotations

import dataclasses

import pytest

from northstar.errors import (
    DefinitionChanged,
    NorthstarError,
    OutcomeSettling,
    RecipeInvalid,
    RunNotFound,
    error_class_for_code,
    error_line,
)
from northstar.readers.ending_text import ending_lines, endings_table
from northstar.readers.endings import (
    ENDINGS,
    Ending,
    RunEnding,
    StopReason,
    _expectation,
    ending_for,
    ending_for_error,
    ending_of,
)
from northstar.readers.views import RunSummary, StepView


def summary(status: str, *, total: int, recorded: int, verified: int) -> RunSummary:
    return RunSummary(
        run_id="r-0123456789ab",
        recipe_name="r",
        recipe_path="/r.yaml",
        project="default",
        profile="",
        status=status,
        effective_status=status,
        total_iterations=total,
        iterations_recorded=recorded,
        iterations_verified=verified,
        started_at="2026-01-01T00:00:00+00:00",
        ended_at=None,
        heartbeat_at=None,
        worker_pid=None,
        worker_host=None,
    )


def step(message: str, evidence: tuple[dict[str, object], ...] = ()) -> StepView:
    error = {"code": "EXPECTATION_FAILED", "message": message}
    return StepView(
        "confirm", "admin", "verify_outcome", 2, "failed", "failed", None, None, 1.0,
        evidence, error, (),
    )  # fmt: skip


@pytest.mark.parametrize("row", [row for row in ENDINGS if row.codes], ids=lambda row: row.name)
def test_every_code_of_a_row_leads_to_it_for_a_failed_run_and_for_an_error(row: Ending) -> None:
    for code in row.codes:
        assert ending_for("failed", code).name == row.name
        if error_class_for_code(code).code == code:  # an error class (not an iteration's code)
            assert ending_for_error(error_class_for_code(code)("x")).name == row.name


def test_a_code_is_found_through_its_error_class_and_an_unknown_one_is_not_verified() -> None:
    assert ending_for_error(OutcomeSettling("x")).name == "unknown_outcome"
    assert ending_for_error(RecipeInvalid("x")).name == "usage_error"
    assert ending_for_error(RunNotFound("x")).name == "usage_error"  # not a journal error
    assert ending_for("failed", "TARGET_MISSING").name == "not_verified"
    assert ending_for("failed", "SOMETHING_NEW").name == "not_verified"
    assert ending_for("failed", None).name == "not_verified"


def test_a_status_that_means_one_ending_decides_whatever_the_code() -> None:
    assert ending_for("blocked", "BROWSER_CLOSED").name == "unknown_outcome"
    assert ending_for("stopped", "EXPECTATION_FAILED").name == "stopped"
    assert ending_for("interrupted", None).name == "interrupted"
    assert ending_for("verified", None).exit_code == 0


def test_exit_statuses_differ_where_a_person_must_act_differently() -> None:
    by_exit: dict[int, set[str]] = {}
    for row in ENDINGS:
        by_exit.setdefault(row.exit_code, set()).add(row.name)
    shared = {frozenset(names) for names in by_exit.values() if len(names) > 1}
    # A signed-out session has no code of its own yet; an interrupted run is reconciled first.
    assert shared == {
        frozenset({"interrupted", "unknown_outcome"}),
        frozenset({"not_verified", "signed_out"}),
    }
    assert ending_for("failed", "DEFINITION_CHANGED").exit_code not in (0, 1, 2, 3, 4, 130)
    assert len({row.name for row in ENDINGS}) == len(ENDINGS)


def binding_stop(table: tuple[Ending, ...] = ENDINGS) -> RunEnding:
    reason = StopReason(
        "DEFINITION_CHANGED",
        "the recipe x.yaml changed on disk since the run started",
        iteration=2,
        path="/work/x.yaml",
    )
    facts = summary("failed", total=4, recorded=1, verified=1)
    return ending_of(facts, {"verified": 1}, (reason,), (2, 3, 4), table)


def test_a_binding_stop_names_its_code_file_counts_and_next_command() -> None:
    ending = binding_stop()
    assert (ending.ending and ending.ending.name, ending.exit_code) == ("binding_changed", 5)
    assert ending_lines(ending) == [
        "run r-0123456789ab: failed, 1 of 4 iterations verified",
        "stopped by DEFINITION_CHANGED before iteration 2: "
        "the recipe x.yaml changed on disk since the run started",
        "  file:     /work/x.yaml",
        "not started: 3 of 4 iterations (2, 3, 4)",
        "next: start a new run for the iterations not verified (2, 3, 4); the 1 verified "
        "must not run again (northstar show r-0123456789ab)",
    ]
    data = ending.to_dict()
    assert (data["requested"], data["recorded"], data["verified"]) == (4, 1, 1)
    assert (data["code"], data["exit_code"], data["ending"]) == (
        "DEFINITION_CHANGED",
        5,
        "binding_changed",
    )


def test_one_more_row_needs_no_change_to_the_renderer() -> None:
    read_only = Ending(
        "read_only",
        "the site is in read-only mode",
        11,
        "wait for the site and resume",
        codes=("SITE_READ_ONLY",),
        next="next: wait for the site, then northstar resume {run_id}",
        one_line=True,
    )
    table = (*ENDINGS, read_only)
    reason = StopReason(
        "SITE_READ_ONLY", "the site said: read-only mode", state="failed", iteration=1, step="save"
    )
    facts = summary("failed", total=1, recorded=1, verified=0)
    ending = ending_of(facts, {"failed": 1}, (reason,), (), table)
    assert (ending.ending, ending.exit_code) == (read_only, 11)
    assert ending_lines(ending)[1:] == [
        "iteration 1 of 1 NOT verified (failed): SITE_READ_ONLY at 'save': "
        "the site said: read-only mode",
        "next: wait for the site, then northstar resume r-0123456789ab",
    ]
    assert "| `read_only` | 11 | `SITE_READ_ONLY` |" in endings_table(table)


def test_a_failure_that_is_not_about_a_page_is_one_line_with_the_url() -> None:
    reason = StopReason(
        "SITE_UNREACHABLE",
        "http://127.0.0.1:9/form could not be reached: the connection failed "
        "(ERR_CONNECTION_REFUSED)",
        state="failed",
        iteration=1,
        step="name",
        step_number=1,
        tab="site",
        url="http://127.0.0.1:9/form",
    )
    ending = ending_of(
        summary("failed", total=2, recorded=1, verified=0), {"failed": 1}, (reason,), (2,)
    )
    lines = ending_lines(ending)
    assert lines[1] == (
        "iteration 1 of 2 NOT verified (failed): SITE_UNREACHABLE at step 1 'name' (tab site): "
        "http://127.0.0.1:9/form could not be reached: the connection failed "
        "(ERR_CONNECTION_REFUSED)"
    )
    assert not any(line.startswith(("  expected", "  found")) for line in lines)
    assert (
        lines[-1]
        == "next: check that http://127.0.0.1:9/form answers, then northstar resume r-0123456789ab"
    )


def test_a_check_that_failed_shows_expected_and_found() -> None:
    reason = StopReason(
        "EXPECTATION_FAILED", "x: Locator expected to be visible / Actual value: hidden",
        state="failed", iteration=3, step="confirm", step_number=2, tab="admin",
        expected="x", found="hidden", files=("/runs/r/iteration-0003-failure-admin.png",),
    )  # fmt: skip
    facts = summary("failed", total=20, recorded=3, verified=2)
    ending = ending_of(facts, {"verified": 2, "failed": 1}, (reason,), tuple(range(4, 14)))
    assert ending_lines(ending) == [
        "run r-0123456789ab: failed, 2 of 20 iterations verified "
        "(3 recorded: 2 verified, 1 failed)",
        "iteration 3 of 20 NOT verified (failed): EXPECTATION_FAILED at step 2 'confirm' "
        "(tab admin)",
        "  expected: x",
        "  found:    hidden",
        "  reason:   x: Locator expected to be visible / Actual value: hidden",
        "  file:     /runs/r/iteration-0003-failure-admin.png",
        "not started: 17 of 20 iterations (4, 5, 6, 7, 8, 9, 10, 11, 12, 13, ...)",
        "details: northstar show r-0123456789ab  (or northstar report r-0123456789ab for a page)",
    ]
    assert ending.rest_text() == "18 of 20: 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, ..."
    # The reason that is the failed check's own text is not printed twice.
    said = dataclasses.replace(reason, said_by_check=True)
    again = ending_of(facts, {"verified": 2, "failed": 1}, (said,), tuple(range(4, 14)))
    assert not any(line.startswith("  reason:") for line in ending_lines(again))


def test_expected_and_found_come_from_the_failed_evidence_or_playwrights_text() -> None:
    text = (
        "text of status {'equals': 'A'}: Locator expected to have text 'A' / Actual value: B"
        " / Call log: x"
    )
    assert _expectation(step(text)) == ("text of status {'equals': 'A'}", "B")
    assert _expectation(step("no element matches button 'Save'")) == (
        "no element matches button 'Save'",
        None,
    )
    failed = ({"kind": "url", "expected": "url **/done", "passed": False, "found": "http://x"},)
    assert _expectation(step(text, failed)) == ("url **/done", "http://x")


def test_the_lines_and_the_error_line_never_carry_raw_control_characters() -> None:
    hostile = "title\x1b[2J\rFAKE\nline\u202eevil\x00"
    reason = StopReason("EXPECTATION_FAILED", hostile, state="failed", iteration=1, found=hostile)
    reason = dataclasses.replace(reason, expected=hostile)
    ending = ending_of(summary("failed", total=1, recorded=1, verified=0), {"failed": 1}, (reason,))
    error: NorthstarError = DefinitionChanged(hostile, path=hostile)
    for line in [*ending_lines(ending), error_line(error)]:
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c == "\u202e" for c in line)
    assert "title\\x1b[2J\\x0dFAKE\\x0aline\\u202eevil\\x00" in error_line(error)


def test_a_probe_that_proves_nothing_has_its_own_ending_inside_its_status() -> None:
    assert ending_for("needs_review", "PROBE_BLIND").name == "probe_blind"
    assert ending_for("blocked", "INCONCLUSIVE").name == "probe_inconclusive"
    assert ending_for("needs_review", "OUTPUT_SAVE_FAILED").name == "needs_review"
    assert ending_for("blocked", "OUTCOME_UNKNOWN").name == "unknown_outcome"
