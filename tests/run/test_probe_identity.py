"""Probes that see what they claim: the run's own signed-in state, the page they asked for,
and a positive control before any absence counts. Real Chromium, the fixture site's
server-side submissions as the oracle.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from browser_adapters import PlaywrightHost
from fixtures._site_probes import RECEIPT_RECIPE
from fixtures._site_routes import DEMO_PASSWORD, DEMO_USERNAME
from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.browser.settings import BrowserSettings
from northstar.cli import cli
from northstar.cli._inputs import build_request
from northstar.errors import RunBlocked
from northstar.journal import Journal
from northstar.run.execution import RunRequest, execute_run
from northstar.run.recovery import reconcile_run, resume_run
from tests.cli.test_cli_run import northstar as cli_run
from tests.run.clock import Clock

pytestmark = pytest.mark.browser

PAST_SETTLE_S = 61

NOTES = """
name: probe-notes
params:
  title: {type: string, required: true}
tabs:
  admin: {start: "{{ base_url }}/probes/notes/new"}
steps:
  - id: title
    tab: admin
    fill: {target: {label: Title}, value: "{{ title }}-{{ iteration }}"}
  - id: save
    tab: admin
    timeout: 3000
    click: {target: {role: button, name: Save note}}
    effect: submit
    expect:
      - text: {target: {role: status}, equals: "Note saved: {{ title }}-{{ iteration }}"}
    reconcile:
      - goto: "/probes/notes"
      - page: {visible: {role: heading, name: Notes}}
      - check: {visible: {text: "{{ title }}-{{ iteration }}", exact: true}}
"""

# The listing shows each post as a link named by its title; ``LOOKS_FOR`` decides what
# the probe looks for: the title itself (a probe that can see) or a text never shown.
POSTS = """
name: probe-posts
params:
  prefix: {type: string, required: true}
tabs:
  admin: {start: "{{ base_url }}/posts/new"}
steps:
  - id: title
    tab: admin
    fill: {target: {label: Title}, value: "{{ prefix }}-{{ iteration }}"}
  - id: publish
    tab: admin
    timeout: 3000
    click: {target: {role: button, name: Publish}}
    effect: submit
    expect:
      - text: {target: {role: status}, equals: "Post published: {{ prefix }}-{{ iteration }}"}
    reconcile:
      - goto: "/posts?q={{ prefix }}-{{ iteration }}"
      - check: {visible: {role: link, name: "LOOKS_FOR", exact: true}}
"""
SEES = "{{ prefix }}-{{ iteration }}"
NEVER = "#{{ iteration }} {{ prefix }}-{{ iteration }}"


def recipe_file(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def make_request(recipe: Path, base_url: str, *params: str, **extra: Any) -> RunRequest:
    return build_request({"recipe": str(recipe), "params": params, "base_url": base_url, **extra})


async def sign_in(host: Any, site: FixtureSite, state: Path) -> None:
    """Sign in through the login page and save the context's storage state to ``state``."""
    context = await host.browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(f"{site.base_url}/login?next=/probes/notes")
        await page.get_by_label("Username").fill(DEMO_USERNAME)
        await page.get_by_label("Password").fill(DEMO_PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url("**/probes/notes")
        await context.storage_state(path=str(state))
    finally:
        await context.close()


async def sign_out(host: Any, site: FixtureSite, state: Path) -> None:
    """End the session saved in ``state`` on the server (the file still holds its cookie)."""
    context = await host.browser.new_context(storage_state=str(state))
    try:
        await context.request.post(f"{site.base_url}/logout", max_redirects=0)
    finally:
        await context.close()


def signed_in_host(host: PlaywrightHost, state: Path) -> PlaywrightHost:
    """The session's browser, each iteration's context started from ``state``."""
    return host.sharing_browser(BrowserSettings(storage_state=str(state)))


def notes(site: FixtureSite) -> Counter[str]:
    return Counter(s["title"] for s in site.submissions() if s["kind"] == "note")


def posts(site: FixtureSite, prefix: str) -> Counter[str]:
    return Counter(
        s["title"]
        for s in site.submissions()
        if s["kind"] == "post" and s["title"].startswith(prefix)
    )


async def test_probe_behind_a_login_looks_with_the_runs_storage_state(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    state = tmp_path / "state.json"
    await sign_in(host, site, state)
    recipe = recipe_file(tmp_path, NOTES, "notes")
    req = make_request(recipe, site.base_url, "title=walled", profile=str(state))
    site.set_fault("/probes/notes", delay_s=5)  # saved at once, answered after the timeout
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(req, host=signed_in_host(host, state), journal=journal)
        assert outcome.results[0].state == "unknown"
        # Reconciled on a host given no profile: the probe takes the run's own.
        decisions = await reconcile_run(
            outcome.run_id, outcome.credential, req, host=host, journal=journal
        )
        assert [(d.iteration, d.state) for d in decisions] == [(1, "verified")], decisions
    assert notes(site) == Counter({"walled-1": 1})


async def test_probe_landing_on_the_login_page_is_inconclusive_until_it_sees(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    state = tmp_path / "state.json"
    await sign_in(host, site, state)
    recipe = recipe_file(tmp_path, NOTES, "notes")
    req = make_request(recipe, site.base_url, "title=expired", profile=str(state))
    site.set_fault("/probes/notes", delay_s=5)
    clock = Clock(ahead_s=PAST_SETTLE_S)  # absence would be provable by time alone
    with Journal.open(tmp_path / "journal.db", now=clock) as journal:
        outcome = await execute_run(req, host=signed_in_host(host, state), journal=journal)
        run_id, credential = outcome.run_id, outcome.credential
        await sign_out(host, site, state)  # the run's session ends: probes meet the login page
        for order in ("reconcile", "resume", "reconcile", "resume", "reconcile"):
            if order == "reconcile":
                decisions = await reconcile_run(run_id, credential, req, host=host, journal=journal)
                assert [(d.state, d.code) for d in decisions] == [("unknown", "INCONCLUSIVE")]
                assert "login" in decisions[0].reason, decisions[0].reason
                assert journal.run_record(run_id).status == "blocked"
            else:
                with pytest.raises(RunBlocked):
                    await resume_run(run_id, credential, req, host=host, journal=journal)
            assert notes(site) == Counter({"expired-1": 1}), order
        await sign_in(host, site, state)  # signed in again: the next reconcile sees the note
        decisions = await reconcile_run(run_id, credential, req, host=host, journal=journal)
        assert [(d.state, d.code) for d in decisions] == [("verified", "RECONCILED")]
    assert notes(site) == Counter({"expired-1": 1})


def fault_on_second(site: FixtureSite, **fault: Any) -> Any:
    """An ``on_result`` that plans a fault for the POST of the iteration after the first."""

    def plan(result: Any) -> None:
        if result.iteration == 1:
            site.set_fault("/posts", **fault)

    return plan


async def second_unknown(
    host: Any, site: FixtureSite, journal: Journal, req: RunRequest, **fault: Any
) -> Any:
    """Run two iterations, the second's POST faulted: the first verified, the second unknown."""
    outcome = await execute_run(
        req, host=host, journal=journal, on_result=fault_on_second(site, **fault)
    )
    assert [r.state for r in outcome.results] == ["verified", "unknown"]
    return outcome


def control_of(journal: Journal, req: RunRequest, site: FixtureSite) -> Any:
    """The positive control the run recorded for its submit step's probe."""
    control = journal.probe_control(req.compiled.recipe_hash, site.base_url, "publish")
    assert control is not None
    return control


async def test_blind_probe_never_proves_absence(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    recipe = recipe_file(tmp_path, POSTS.replace("LOOKS_FOR", NEVER), "blind")
    req = make_request(recipe, site.base_url, "prefix=blind", repeat=2)
    clock = Clock()
    with Journal.open(tmp_path / "journal.db", now=clock) as journal:
        # The second POST is saved at once and answered late: its outcome is unknown.
        outcome = await second_unknown(host, site, journal, req, delay_s=5)
        assert not control_of(journal, req, site).proven
        clock.advance(PAST_SETTLE_S)
        run_id, credential = outcome.run_id, outcome.credential
        for order in ("reconcile", "resume", "reconcile", "reconcile", "resume", "reconcile"):
            if order == "reconcile":
                decisions = await reconcile_run(run_id, credential, req, host=host, journal=journal)
                assert [(d.iteration, d.state, d.code) for d in decisions] == [
                    (2, "needs_review", "PROBE_BLIND")
                ]
                assert "#2 blind-2" in decisions[0].reason  # what it looked for
                assert journal.run_record(run_id).status == "needs_review"
            else:
                with pytest.raises(RunBlocked):
                    await resume_run(run_id, credential, req, host=host, journal=journal)
            assert posts(site, "blind-") == Counter({"blind-1": 1, "blind-2": 1}), order
    said = probe_report(recipe, tmp_path, site, run_id)
    assert "probe of publish: BLIND (cannot prove absence): looked for" in said.validate
    assert "probe of publish: BLIND" in said.show
    assert "<dt>probe of publish</dt><dd>BLIND (cannot prove absence)" in said.report


async def test_proven_probe_proves_absence_and_resends_once(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    recipe = recipe_file(tmp_path, POSTS.replace("LOOKS_FOR", SEES), "proven")
    req = make_request(recipe, site.base_url, "prefix=seen", repeat=2)
    clock = Clock()
    with Journal.open(tmp_path / "journal.db", now=clock) as journal:
        # The second POST is answered 500 before anything is saved: truly absent.
        outcome = await second_unknown(host, site, journal, req, status=500)
        assert control_of(journal, req, site).proven
        events = readers.get_run(tmp_path / "journal.db", outcome.run_id).events
        controls = [event for event in events if event.name == "probe_control"]
        assert len(controls) == 1  # the first verified submission of the run only
        assert posts(site, "seen-") == Counter({"seen-1": 1})
        clock.advance(PAST_SETTLE_S)
        decisions = await reconcile_run(
            outcome.run_id, outcome.credential, req, host=host, journal=journal
        )
        assert [(d.iteration, d.state) for d in decisions] == [(2, "failed")]
        resumed = await resume_run(
            outcome.run_id, outcome.credential, req, host=host, journal=journal
        )
        assert resumed.status == "verified"
    assert posts(site, "seen-") == Counter({"seen-1": 1, "seen-2": 1})
    said = probe_report(recipe, tmp_path, site, outcome.run_id)
    assert "probe of publish: proven" in said.validate
    assert "probe of publish: proven" in said.show
    assert "<dt>probe of publish</dt><dd>proven" in said.report


@dataclass(frozen=True)
class ProbeReport:
    validate: str
    show: str
    report: str


def probe_report(recipe: Path, tmp_path: Path, site: FixtureSite, run_id: str) -> ProbeReport:
    """What ``validate --probe`` and ``show`` say about the recipe's probe."""
    journal = str(tmp_path / "journal.db")
    runner = CliRunner()
    checked = runner.invoke(
        cli, ["validate", str(recipe), "--probe", "--base-url", site.base_url, "--journal", journal]
    )
    assert checked.exit_code == 0, checked.output
    shown = runner.invoke(cli, ["show", run_id, "--journal", journal])
    page = tmp_path / "report.html"
    reported = runner.invoke(cli, ["report", run_id, "--journal", journal, "--out", str(page)])
    assert reported.exit_code == 0, reported.output
    return ProbeReport(checked.output, shown.output, page.read_text())


RECEIPT = RECEIPT_RECIPE


async def test_a_found_submission_whose_answer_page_only_was_read_is_finished_not_reviewed(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    """Its answer came from a POST: nothing can show it again, and nothing needs to."""
    recipe = recipe_file(tmp_path, RECEIPT, "receipt")
    req = make_request(recipe, site.base_url, "prefix=answer")
    # The form's load and then its POST answer late; the POST is saved at once.
    site.set_fault("/probes/receipts/new", delay_s=5, times=2)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(req, host=host, journal=journal)
        assert [r.state for r in outcome.results] == ["unknown"]
        decisions = await reconcile_run(
            outcome.run_id, outcome.credential, req, host=host, journal=journal
        )
        assert [(d.state, d.code) for d in decisions] == [("verified", "RECONCILED")]
        assert journal.run_record(outcome.run_id).status == "verified"
    assert Counter(s["title"] for s in site.submissions() if s["kind"] == "receipt") == Counter(
        {"answer-1": 1}
    )


async def test_reconcile_and_resume_without_profile_use_the_runs_own(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    """On the command line: the run was given --profile; reconcile and resume are not."""
    state = tmp_path / "state.json"
    await sign_in(host, site, state)
    recipe = recipe_file(tmp_path, NOTES, "notes")
    inputs = ("-p", "title=cli", "--base-url", site.base_url)
    site.set_fault("/probes/notes", delay_s=5)  # iteration 1 saved, answered too late
    ran = cli_run(
        "run", str(recipe), *inputs, "--repeat", "2", "--profile", str(state), cwd=tmp_path
    )
    run_id = ran.stderr.split("run ", 1)[1].split()[0]
    assert ran.returncode == 4, ran.stderr  # blocked: iteration 1's outcome is unknown
    reconciled = cli_run("reconcile", run_id, *inputs, cwd=tmp_path)
    assert "iteration 1: stopped" in reconciled.stdout or "iteration 1: verified" in (
        reconciled.stdout
    ), reconciled.stdout + reconciled.stderr
    resumed = cli_run("resume", run_id, *inputs, cwd=tmp_path)  # iteration 2: signed in
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert notes(site) == Counter({"cli-1": 1, "cli-2": 1})
