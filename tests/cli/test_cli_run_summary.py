"""The end of ``northstar run``: the failing iteration, its step, expected and found, next command.

Two runs in a real process against the fixture site (a row that fails once; a submission
whose outcome is unknown), and the summary's lines as pure functions over plain results.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fixtures.report_screenshot import RECIPE
from fixtures.site_server import FixtureSite
from northstar.cli._output import format_error, outcome_to_dict
from northstar.cli.run_summary import expectation_of, next_command, summary_lines
from northstar.errors import ProgramIterationNotVerified
from northstar.results import Evidence, IterationResult, IterationState, StepResult, StepStatus
from northstar.run.execution import RunOutcome
from northstar.run.repeat import RepeatSummary
from tests.cli.test_cli_recovery import HELD_POST
from tests.cli.test_cli_run import northstar, write

# The second row expects another confirmation than the site shows: it fails once.
ROWS = "title,expected\nFirst,First\nSecond,Other\nThird,Third\n"


@pytest.mark.browser
def test_a_failed_three_iteration_run_names_its_failure_and_show_names_its_files(
    tmp_path: Path, site: FixtureSite
) -> None:
    recipe = write(tmp_path, "check.yaml", RECIPE)
    rows = write(tmp_path, "rows.csv", ROWS)
    args = ("--params-file", str(rows), "--base-url", site.base_url)
    proc = northstar("run", str(recipe), *args, "--trace", "retain-on-failure", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    run_id = re.search(r"^run (r-[0-9a-f]{12})$", proc.stderr, re.M)
    assert run_id is not None, proc.stderr
    # Not a terminal: the progress display degrades to one plain line per iteration.
    assert re.search(r"^iteration 1/3: verified in \d+\.\d\d s \| ", proc.stderr, re.M)
    assert "iteration 2/3: failed (EXPECTATION_FAILED) in " in proc.stderr
    assert "\r" not in proc.stderr
    out = proc.stdout
    assert (
        "iteration 2 of 3 NOT verified (failed): EXPECTATION_FAILED at step 3 'confirm' (tab admin)"
        in out
    ), out
    assert "  expected: text of status {'equals': 'Post published: Other'}\n" in out
    assert "  found:    Post published: Second\n" in out
    assert "not started: 1 of 3 iterations (3)" in out
    assert f"details: northstar show {run_id[1]} " in out
    assert "RUN_ID" not in out + proc.stderr
    assert f"`northstar show {run_id[1]}`" in out  # the error line's fix, too
    screenshot = re.search(r"^  file:     (\S+iteration-0002-failure-admin\.png)$", out, re.M)
    assert screenshot is not None, out
    assert Path(screenshot[1]).is_file()
    trace = Path(screenshot[1]).with_name("iteration-0002-trace.zip")
    assert f"  file:     {trace}\n" in out
    assert site.submission_count("post") == 2  # the third row was never submitted

    shown = northstar("show", run_id[1], cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    failed_part = shown.stdout.split("  iteration 2  failed")[1]
    assert f"    screenshot: {screenshot[1]}\n" in failed_part
    assert f"    trace: {trace}  (playwright show-trace {trace})\n" in failed_part
    assert "screenshot:" not in shown.stdout.split("  iteration 2  failed")[0]  # verified: none
    as_json = json.loads(northstar("show", run_id[1], "--json", cwd=tmp_path).stdout)
    assert as_json["files"] == [
        {"iteration": 2, "screenshots": [screenshot[1]], "trace": str(trace)}
    ]


@pytest.mark.browser
def test_an_unknown_outcome_points_at_reconcile_with_the_run_id(
    tmp_path: Path, site: FixtureSite
) -> None:
    recipe = write(tmp_path, "held.yaml", HELD_POST.replace("timeout: 2000", "timeout: 500"))
    site.hold("/posts")
    proc = northstar(
        "run", str(recipe), "--base-url", site.base_url, "-p", "title=Held", cwd=tmp_path
    )
    site.release_held(save=False)
    assert proc.returncode == 4, proc.stderr
    run_id = re.search(r"^run (r-[0-9a-f]{12})$", proc.stderr, re.M)
    assert run_id is not None, proc.stderr
    assert re.search(
        r"^iteration 1 of 1 NOT verified \(unknown\): \S+ at step 2 'publish'", proc.stdout, re.M
    ), proc.stdout
    assert f"next: northstar reconcile {run_id[1]} " in proc.stdout
    assert f"then northstar resume {run_id[1]})" in proc.stdout
    assert "RUN_ID" not in proc.stdout + proc.stderr


# The lines as pure logic


def _failed_step(message: str) -> StepResult:
    error = {"code": "EXPECTATION_FAILED", "message": message}
    return StepResult("confirm", "admin", "verify_outcome", StepStatus.FAILED, error=error)


def test_expected_and_found_come_from_playwrights_assertion_text() -> None:
    step = _failed_step(
        "text of status {'equals': 'A'}: Locator expected to have text 'A' / Actual value: B"
        " / Call log: x"
    )
    found = expectation_of(step)
    assert found is not None
    assert (found.expected, found.found) == ("text of status {'equals': 'A'}", "B")


def test_failed_evidence_wins_and_a_message_without_actual_value_is_the_expectation() -> None:
    evidence = Evidence("url", "admin", "url **/done", passed=False, found="http://x/form")
    with_evidence = StepResult("save", "admin", "click", StepStatus.FAILED, evidence=(evidence,))
    found = expectation_of(with_evidence)
    assert found is not None
    assert (found.expected, found.found) == ("url **/done", "http://x/form")
    missing = expectation_of(_failed_step("no element matches button 'Save'"))
    assert missing is not None
    assert (missing.expected, missing.found) == (
        "no element matches button 'Save'",
        None,
    )


def _outcome(status: str, results: list[IterationResult], requested: int) -> RunOutcome:
    verified = [r for r in results if r.verified]
    return RunOutcome("r-0123456789ab", "c", status, RepeatSummary.of(requested, verified), results)


def test_summary_lists_the_failure_and_the_iterations_never_started() -> None:
    ok = StepResult("open", "admin", "goto", StepStatus.PASSED)
    failing = IterationResult(
        3,
        IterationState.FAILED,
        steps=(ok, _failed_step("x: Locator expected to be visible / Actual value: hidden")),
        reason_code="EXPECTATION_FAILED",
        reason="x: Locator expected to be visible / Actual value: hidden",
        failing_step="confirm",
    )
    first = [IterationResult(n, IterationState.VERIFIED) for n in (1, 2)]
    lines = summary_lines(_outcome("failed", [*first, failing], 20))
    assert lines == [
        "iteration 3 of 20 NOT verified (failed): EXPECTATION_FAILED"
        " at step 2 'confirm' (tab admin)",
        "  expected: x",
        "  found:    hidden",
        "not started: 17 of 20 iterations (4, 5, 6, 7, 8, 9, 10, 11, 12, 13, ...)",
        "details: northstar show r-0123456789ab  (or northstar report r-0123456789ab for a page)",
    ]


def test_a_verified_run_has_no_summary_and_a_blocked_one_names_reconcile() -> None:
    verified = [IterationResult(1, IterationState.VERIFIED)]
    assert summary_lines(_outcome("verified", verified, 1)) == []
    command = next_command("r-1", "blocked")
    assert command is not None
    assert command.startswith("next: northstar reconcile r-1 ")


def test_error_fixes_name_the_real_run_id_in_the_line_and_the_json() -> None:
    error = ProgramIterationNotVerified("iteration 2 was not verified", iteration=2)
    outcome = _outcome("failed", [IterationResult(1, IterationState.VERIFIED)], 3)
    outcome.error = error
    assert "`northstar show RUN_ID`" in format_error(error)  # no id known: the placeholder
    assert outcome_to_dict(outcome)["error"]["fix"] == (
        "Read the iteration's reason with `northstar show r-0123456789ab`, fix it, run again."
    )
    assert "`northstar show r-0123456789ab`" in format_error(error)
