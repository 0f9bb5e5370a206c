"""Reconcile's and resume's decisions as plain functions: settle periods and resume points.

No browser: the probe's verdict, the times and the verified submissions are given as
data. The browser tests in ``test_reconcile_settle.py`` run the same decisions for real.
"""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from northstar.errors import RecipeInvalid
from northstar.journal import Journal, SubmissionState
from northstar.journal.schema import MIGRATIONS, migrate
from northstar.plan.model import Plan
from northstar.recipe.model import DEFAULT_SETTLE_S
from northstar.redaction import REDACTED
from northstar.results import IterationState, StepResult, StepStatus
from northstar.run.continuation import Continuation, Unresumable, resume_plan
from northstar.run.reconcile import (
    ProbeVerdict,
    SubmissionCheck,
    SubmissionOutcome,
    decide_submission,
    iteration_verdict,
    landing_pattern,
    probe_plan,
)
from northstar.run.recorder import JournalRecorder
from tests.conftest import make_plan

SENT = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
BASE = "http://127.0.0.1:9"

RECIPE = """
name: post-then-view
params:
  title: {type: string, required: true}
tabs:
  admin: {start: "{{ base_url }}/posts/new"}
  viewer: {start: "{{ base_url }}/"}
steps:
  - id: title
    tab: admin
    fill: {target: {label: Title}, value: "{{ title }}"}
  - id: publish
    tab: admin
    click: {target: {role: button, name: Publish}}
    effect: submit
    settle: 5
    expect: [{url: "**/posts?created=*"}]
    reconcile:
      - goto: "/posts?q={{ title }}"
      - check: {visible: {role: link, name: "{{ title }}"}}
  - id: open-post
    tab: admin
    click: {target: {role: link, name: "{{ title }}"}}
    expect: [{visible: {role: heading, name: "{{ title }}"}}]
"""


def plan_of(text: str = RECIPE, title: str = "Fish & chips") -> Plan:
    return make_plan(text, {"title": title}, base_url=BASE)


# --- settle -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "after_s", "outcome"),
    [
        (ProbeVerdict.ABSENT, 0, SubmissionOutcome.SETTLING),
        (ProbeVerdict.ABSENT, 59, SubmissionOutcome.SETTLING),
        (ProbeVerdict.ABSENT, 60, SubmissionOutcome.ABSENT),
        (ProbeVerdict.ABSENT, 3600, SubmissionOutcome.ABSENT),
        (ProbeVerdict.FOUND, 0, SubmissionOutcome.FOUND),
        (ProbeVerdict.INCONCLUSIVE, 0, SubmissionOutcome.INCONCLUSIVE),
        (ProbeVerdict.INCONCLUSIVE, 3600, SubmissionOutcome.INCONCLUSIVE),
    ],
)
def test_absence_is_proven_only_after_the_settle_period(
    verdict: ProbeVerdict, after_s: int, outcome: SubmissionOutcome
) -> None:
    now = SENT + timedelta(seconds=after_s)
    assert decide_submission(verdict, SENT, 60, now, proven=True) is outcome


@pytest.mark.parametrize(
    ("verdict", "after_s", "outcome"),
    [
        (ProbeVerdict.ABSENT, 0, SubmissionOutcome.SETTLING),
        (ProbeVerdict.ABSENT, 3600, SubmissionOutcome.BLIND),
        (ProbeVerdict.FOUND, 0, SubmissionOutcome.FOUND),
        (ProbeVerdict.INCONCLUSIVE, 3600, SubmissionOutcome.INCONCLUSIVE),
    ],
)
def test_a_probe_never_proven_cannot_prove_absence(
    verdict: ProbeVerdict, after_s: int, outcome: SubmissionOutcome
) -> None:
    now = SENT + timedelta(seconds=after_s)
    assert decide_submission(verdict, SENT, 60, now, proven=False) is outcome


def test_a_settling_iteration_stays_unknown_and_says_when_it_can_be_decided() -> None:
    checks = [
        SubmissionCheck("publish", SubmissionOutcome.SETTLING, SENT, 60),
        SubmissionCheck("confirm", SubmissionOutcome.FOUND, SENT, 10),
    ]
    verdict = iteration_verdict(checks, None)
    assert verdict.state is IterationState.UNKNOWN
    assert verdict.code == "OUTCOME_SETTLING"
    assert verdict.decidable_at == SENT + timedelta(seconds=60)
    assert "2026-05-01T12:01:00+00:00" in verdict.reason
    assert "'publish'" in verdict.reason


def test_inconclusive_outranks_settling_and_absent_outranks_found() -> None:
    settling = SubmissionCheck("a", SubmissionOutcome.SETTLING, SENT, 60)
    unclear = SubmissionCheck("b", SubmissionOutcome.INCONCLUSIVE, SENT, 60)
    absent = SubmissionCheck("a", SubmissionOutcome.ABSENT, SENT, 60)
    found = SubmissionCheck("b", SubmissionOutcome.FOUND, SENT, 60)
    unclear_verdict = iteration_verdict([settling, unclear], None)
    assert (unclear_verdict.state, unclear_verdict.code) == (IterationState.UNKNOWN, "INCONCLUSIVE")
    assert iteration_verdict([absent, found], None).state is IterationState.FAILED


def test_a_blind_probe_sends_the_iteration_to_review_naming_what_it_saw() -> None:
    blind = SubmissionCheck("a", SubmissionOutcome.BLIND, SENT, 60, "looked for [x]; page at y")
    unclear = SubmissionCheck("b", SubmissionOutcome.INCONCLUSIVE, SENT, 60)
    verdict = iteration_verdict([unclear, blind], None)
    assert (verdict.state, verdict.code) == (IterationState.NEEDS_REVIEW, "PROBE_BLIND")
    assert "looked for [x]; page at y" in verdict.reason
    unprobed = SubmissionCheck("c", SubmissionOutcome.UNPROBED, SENT, 60)
    assert iteration_verdict([unprobed, blind], None).code == "RECONCILED"


@pytest.mark.parametrize(
    ("asked", "shown", "lands"),
    [
        ("http://h:1/posts?q=a", "http://h:1/posts?q=a", True),
        ("http://h:1/posts", "http://h:1/posts/", True),
        ("http://h:1/notes/My Title", "http://h:1/notes/My%20Title", True),
        ("http://h:1/probes/notes", "http://h:1/login?next=/probes/notes", False),
        ("http://h:1/posts", "http://h:1/posts/7", False),
        ("http://h:1/posts", "http://other:1/posts", False),
    ],
)
def test_a_probe_lands_only_on_the_origin_and_path_it_asked_for(
    asked: str, shown: str, lands: bool
) -> None:
    assert bool(re.search(landing_pattern(asked), shown)) is lands


def test_every_goto_of_a_probe_is_followed_by_its_landing_check() -> None:
    page_check = "reconcile:\n      - page: {visible: {role: heading, name: Posts}}\n"
    plan = plan_of(RECIPE.replace("reconcile:\n", page_check))
    probe = probe_plan(plan, plan.step("publish"))
    assert probe is not None
    kinds = [(s.id, s.kind) for s in probe.steps]
    assert kinds == [
        ("probe-1", "wait_for"),
        ("probe-2", "goto"),
        ("probe-2.landed", "wait_for"),
        ("probe-3", "verify_outcome"),
    ], kinds


def test_the_default_settle_period_is_a_minute_and_only_submit_steps_take_one() -> None:
    plan = plan_of(RECIPE.replace("    settle: 5\n", ""))
    assert DEFAULT_SETTLE_S == 60
    assert plan.step("publish").step.settle_s == 60
    assert plan_of().step("publish").step.settle_s == 5
    bad = RECIPE.replace(
        "    click: {target: {role: link", "    settle: 3\n    click: {target: {role: link"
    )
    with pytest.raises(RecipeInvalid, match="only go with `effect: submit`"):
        plan_of(bad)


# --- resume points ------------------------------------------------------------------------------


def test_nothing_verified_means_the_iteration_starts_from_its_first_step() -> None:
    assert resume_plan(plan_of(), {}) is None
    verdict = iteration_verdict([], None)
    assert verdict.state is IterationState.STOPPED
    assert "before any submission was dispatched" in verdict.reason


def test_a_verified_submission_is_continued_from_the_page_it_led_to() -> None:
    landed = f"{BASE}/posts?created=Fish%20%26%20chips"
    rest = resume_plan(plan_of(), {"publish": landed})
    assert isinstance(rest, Continuation)
    assert (rest.after, rest.entry) == ("publish", landed)
    assert [s.id for s in rest.plan.steps] == ["publish.reopen", "open-post"]
    assert rest.plan.tabs["admin"].start == landed
    reopen = rest.plan.steps[0]
    assert reopen.is_passive
    assert reopen.tab == "admin"
    assert not rest.finished
    verdict = iteration_verdict(
        [SubmissionCheck("publish", SubmissionOutcome.FOUND, SENT, 5)], rest
    )
    assert verdict.state is IterationState.STOPPED
    assert verdict.code == "SUBMITTED_NOT_FINISHED"
    assert landed in verdict.reason


def test_a_declared_after_submit_wins_and_is_rendered_like_a_goto() -> None:
    text = RECIPE.replace(
        "    settle: 5\n", '    settle: 5\n    after_submit: "/posts?created={{ title }}"\n'
    )
    rest = resume_plan(plan_of(text), {"publish": f"{BASE}/somewhere/else"})
    assert isinstance(rest, Continuation)
    assert rest.entry == f"{BASE}/posts?created=Fish%20%26%20chips"


@pytest.mark.parametrize("recorded", [None, "/posts?created=x", f"{BASE}/?token={REDACTED}"])
def test_an_unknown_result_page_sends_the_iteration_to_review(recorded: str | None) -> None:
    rest = resume_plan(plan_of(), {"publish": recorded})
    assert isinstance(rest, Unresumable)
    assert "after_submit" in rest.reason
    verdict = iteration_verdict([], rest)
    assert verdict.state is IterationState.NEEDS_REVIEW
    assert verdict.code == "RESUME_POINT_UNKNOWN"


def test_a_submission_with_nothing_after_it_finishes_the_iteration() -> None:
    text = RECIPE.split("  - id: open-post")[0]
    rest = resume_plan(plan_of(text), {"publish": None})  # its page is not needed
    assert isinstance(rest, Continuation)
    assert rest.finished
    assert rest.plan.steps == ()
    found = [SubmissionCheck("publish", SubmissionOutcome.FOUND, SENT, 5)]
    assert iteration_verdict(found, rest).state is IterationState.VERIFIED


def test_a_popup_opened_before_the_submission_cannot_be_brought_back() -> None:
    text = RECIPE.replace("steps:\n", "  preview: {opened_by: open-preview}\nsteps:\n").replace(
        "  - id: title\n",
        "  - id: open-preview\n    tab: admin\n    click: {target: {role: link, name: Preview}}\n"
        "  - id: title\n",
    ) + (
        "  - id: look\n    tab: preview\n"
        "    verify_outcome: {visible: {role: heading, name: Preview}}\n"
    )
    rest = resume_plan(plan_of(text), {"publish": f"{BASE}/posts?created=x"})
    assert isinstance(rest, Unresumable)
    assert "'preview'" in rest.reason


def test_another_tab_used_before_is_reopened_only_when_its_next_step_navigates() -> None:
    used_before = RECIPE.replace(
        "  - id: title\n",
        '  - id: look-around\n    tab: viewer\n    goto: "/items"\n  - id: title\n',
    )
    read_later = used_before + (
        "  - id: check-viewer\n    tab: viewer\n"
        "    verify_outcome: {visible: {role: heading, name: Items}}\n"
    )
    landed = {"publish": f"{BASE}/posts?created=x"}
    assert isinstance(resume_plan(plan_of(read_later), landed), Unresumable)
    navigates = used_before + '  - id: back-to-items\n    tab: viewer\n    goto: "/items"\n'
    rest = resume_plan(plan_of(navigates), landed)
    assert isinstance(rest, Continuation)
    assert [s.id for s in rest.plan.steps][-1] == "back-to-items"


# --- the journal's part -------------------------------------------------------------------------


def test_the_journal_keeps_when_a_submission_was_sent_and_where_it_landed(tmp_path: Path) -> None:
    clock = [SENT]
    plan = plan_of()
    publish = plan.step("publish")
    with Journal.open(tmp_path / "journal.db", now=lambda: clock[0]) as journal:
        run_id, _ = journal.create_run(
            recipe_path="r.yaml",
            recipe_name="r",
            definition_hash="d",
            project="p",
            profile="",
            params_fingerprint="f",
            total_iterations=1,
            options={},
        )
        journal.start_iteration(run_id, 1, params_fingerprint=plan.params_fingerprint)
        recorder = JournalRecorder(journal, run_id)
        recorder.submit_in_flight(plan, publish)
        clock[0] = SENT + timedelta(seconds=2)
        recorder.submit_dispatched(plan, publish)
        clock[0] = SENT + timedelta(seconds=9)
        landed = f"{BASE}/posts?created=x"
        passed = StepResult("publish", "admin", "click", StepStatus.PASSED, result_url=landed)
        recorder.step_finished(plan, passed)
        record = journal.submission(run_id, 1, "publish")
        assert record is not None
        assert record.state is SubmissionState.VERIFIED
        assert record.sent == SENT + timedelta(seconds=2)  # the dispatch, not the verdict
        assert record.result_url == landed
        assert journal.now() == clock[0]


def test_a_v2_journal_gets_send_times_from_its_last_update(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, migrations=MIGRATIONS[:2])
    conn.execute(
        "INSERT INTO runs (run_id, recipe_path, recipe_name, definition_hash, project, "
        "profile, params_fingerprint, credential_hash, total_iterations, status, "
        "started_at) VALUES ('r-1', 'p', 'n', 'd', 'p', 'p', 'f', 'h', 1, 'blocked', 't')"
    )
    conn.execute(
        "INSERT INTO submissions VALUES ('r-1/1/publish', 'r-1', 1, 'publish', 'f', "
        "'unknown', '2026-05-01T12:00:00+00:00', '2026-05-01T12:00:03+00:00')"
    )
    conn.close()
    with Journal.open(path) as journal:
        record = journal.submission("r-1", 1, "publish")
    assert record is not None
    assert record.sent == SENT + timedelta(seconds=3)
    assert (record.result_url, record.decided_by) == (None, None)


ANSWER_READ = RECIPE.split("  - id: open-post")[0] + (
    "  - id: confirm\n"
    "    tab: admin\n"
    '    verify_outcome: {visible: {role: status, name: "Post published: {{ title }}"}}\n'
    "done_when:\n"
    '  - {tab: admin, visible: {text: "Post published"}}\n'
)


@pytest.mark.parametrize("recorded", [None, f"{BASE}/posts/new"])
def test_checks_of_the_answer_page_are_not_reopened_after_a_verified_submission(
    recorded: str | None,
) -> None:
    """The answer to a POST cannot be loaded again: reopening its URL shows the empty form."""
    rest = resume_plan(plan_of(ANSWER_READ), {"publish": recorded})
    assert isinstance(rest, Continuation)
    assert rest.finished
    assert rest.entry is None
    found = [SubmissionCheck("publish", SubmissionOutcome.FOUND, SENT, 5)]
    assert iteration_verdict(found, rest).state is IterationState.VERIFIED


@pytest.mark.parametrize(
    "change",
    [
        ("verify_outcome: {visible:", "extract: {as: shown, from: text, target:"),  # a value
        ("settle: 5\n", f"settle: 5\n    after_submit: {BASE}/posts\n"),  # a declared entry
    ],
)
def test_an_extract_or_a_declared_entry_still_reopens_the_page(change: tuple[str, str]) -> None:
    text = ANSWER_READ.replace(*change)
    if "extract" in change[1]:
        text = text.replace('name: "Post published: {{ title }}"}}', 'name: "Post published"}}')
    rest = resume_plan(plan_of(text), {"publish": f"{BASE}/posts?created=x"})
    assert isinstance(rest, Continuation)
    assert rest.entry is not None
    assert not rest.finished
