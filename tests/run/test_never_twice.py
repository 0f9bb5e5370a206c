"""At most once, and you always know which: fault tests with real processes and Chromium.

The fixture site's server-side submissions are the oracle. A worker process is killed
with SIGKILL at a failpoint (before the in-flight record, between it and the click,
after the click before verification); the run is then reconciled with the recipe's
read-only probe and resumed, in this process, with the session's browser.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar import readers
from northstar.cli._inputs import build_request
from northstar.composition import resolve_credential, run_options
from northstar.errors import (
    CredentialsInvalid,
    DefinitionChanged,
    FileChanged,
    ProfileMismatch,
    RunBlocked,
)
from northstar.journal import Journal, SubmissionState
from northstar.run.execution import RunRequest, execute_run
from northstar.run.failpoints import FAILPOINT_ENV, POINTS
from northstar.run.recovery import decide_iteration, reconcile_run, resume_run
from tests.run.clock import Clock

pytestmark = pytest.mark.browser

NORTHSTAR = [sys.executable, "-c", "from northstar.__main__ import main; main()"]
ITERATIONS = 3
TRIALS = 21
# Reconcile and resume look past the submit step's settle period (60 s by default), so that
# a submission the probe does not find is proven absent rather than left settling.
PAST_SETTLE_S = 61

RECIPE = """
name: fault-post
params:
  prefix: {type: string, required: true}
  attachment: {type: file}
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
      - url: "**/posts?created=*"
      - text: {target: {role: status}, equals: "Post published: {{ prefix }}-{{ iteration }}"}
    reconcile:
      - goto: "/posts?q={{ prefix }}-{{ iteration }}"
      - check: {visible: {role: link, name: "{{ prefix }}-{{ iteration }}", exact: true}}
"""


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "fault-post.yaml"
    path.write_text(RECIPE)
    return path


def titles(site: FixtureSite, prefix: str) -> Counter[str]:
    return Counter(
        s["title"]
        for s in site.submissions()
        if s["kind"] == "post" and s["title"].startswith(prefix + "-")
    )


def request(recipe: Path, prefix: str, base_url: str, **extra: Any) -> RunRequest:
    return build_request(
        {
            "recipe": str(recipe),
            "params": (f"prefix={prefix}", *extra.pop("params", ())),
            "repeat": ITERATIONS,
            "base_url": base_url,
            **extra,
        }
    )


def lines_until(stream: Iterator[str], needle: str) -> str:
    for line in stream:
        if needle in line:
            return line
    raise AssertionError(f"the worker ended without printing {needle!r}")


def kill_at(
    recipe: Path, prefix: str, site: FixtureSite, journal: Path, point: str, iteration: int
) -> str:
    """Start a worker, let it reach the failpoint, SIGKILL it there; return the run id."""
    env = {**os.environ, "NORTHSTAR_JOURNAL": str(journal), FAILPOINT_ENV: f"{point}@{iteration}"}
    worker = subprocess.Popen(
        [
            *NORTHSTAR,
            "run",
            str(recipe),
            "-p",
            f"prefix={prefix}",
            "--base-url",
            site.base_url,
            "--repeat",
            str(ITERATIONS),
        ],
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert worker.stderr is not None
    run_id = lines_until(worker.stderr, "run r-").split()[1]
    lines_until(worker.stderr, f"failpoint {point} {iteration}")
    worker.send_signal(signal.SIGKILL)
    worker.communicate(timeout=60)
    return run_id


def check_interrupted(journal_path: Path, run_id: str, point: str, iteration: int) -> None:
    """The killed iteration is never verified, and its submission is open, not settled."""
    detail = readers.get_run(journal_path, run_id)
    states = {i.number: i.effective_state for i in detail.iterations}
    assert all(states[n] == "verified" for n in range(1, iteration))
    assert states[iteration] == readers.INTERRUPTED
    with Journal.open(journal_path) as journal:
        submission = journal.submission(run_id, iteration, "publish")
    if point == "before_in_flight":
        assert submission is None
    else:
        assert submission is not None
        assert submission.state in (SubmissionState.IN_FLIGHT, SubmissionState.DISPATCHED)


async def test_sigkill_at_random_points_never_sends_twice(
    host: Any, site: FixtureSite, recipe: Path, tmp_path: Path
) -> None:
    chooser = random.Random(20261202)
    outcomes: dict[str, list[str]] = {point: [] for point in POINTS}
    report: list[str] = []
    # One journal, as runs of one recipe on one site share: a first run, not killed, proves
    # the probe (its positive control), so a kill in a trial's first iteration meets a
    # probe that may prove an absence.
    journal_path = tmp_path / "journal.db"
    with Journal.open(journal_path) as journal:
        proving = await execute_run(
            request(recipe, "proving", site.base_url), host=host, journal=journal
        )
        assert proving.status == "verified"
    for trial in range(TRIALS):
        point = POINTS[trial % len(POINTS)]
        iteration = chooser.randint(1, ITERATIONS)
        prefix = f"t{trial}"
        run_id = kill_at(recipe, prefix, site, journal_path, point, iteration)
        sent = titles(site, prefix)
        assert sum(sent.values()) <= iteration, (trial, point, sent)
        assert all(count == 1 for count in sent.values()), (trial, point, sent)
        check_interrupted(journal_path, run_id, point, iteration)
        with Journal.open(journal_path, now=Clock(ahead_s=PAST_SETTLE_S)) as journal:
            credential = resolve_credential(journal, run_id, None)
            again = request(recipe, prefix, site.base_url)
            decisions = await reconcile_run(run_id, credential, again, host=host, journal=journal)
            if journal.run_record(run_id).status != "verified":  # the last one was found
                outcome = await resume_run(run_id, credential, again, host=host, journal=journal)
                assert outcome.status == "verified", (trial, point, iteration, outcome.error)
            outcomes[point].append(journal.run_record(run_id).status)
        verdicts = [str(v) for d in decisions for _, v in d.verdicts] or ["none in flight"]
        final = titles(site, prefix)
        assert final == Counter({f"{prefix}-{n}": 1 for n in range(1, ITERATIONS + 1)}), (
            trial,
            point,
            iteration,
            final,
        )
        report.append(
            f"{trial:>2} {point:<17} iteration {iteration}: sent after kill "
            f"{sum(sent.values())}, probe {'/'.join(verdicts)}, final {sum(final.values())}"
        )
    assert {point: len(done) for point, done in outcomes.items()} == {p: 7 for p in POINTS}
    print("\n".join(report))  # the figures behind the closing note (pytest -s shows them)


async def test_answer_after_timeout_is_unknown_then_reconciled_as_verified(
    host: Any, site: FixtureSite, recipe: Path, tmp_path: Path
) -> None:
    site.set_fault("/posts", delay_s=5)  # saved at once, answered after the step's timeout
    req = request(recipe, "slow", site.base_url, repeat=1)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(req, host=host, journal=journal)
        assert outcome.status == "blocked"
        assert outcome.results[0].state == "unknown"
        assert outcome.results[0].reason_code == "OUTCOME_UNKNOWN"
        with pytest.raises(RunBlocked):
            await resume_run(outcome.run_id, outcome.credential, req, host=host, journal=journal)
        decisions = await reconcile_run(
            outcome.run_id, outcome.credential, req, host=host, journal=journal
        )
        assert [(d.iteration, d.state) for d in decisions] == [(1, "verified")]
        assert journal.run_record(outcome.run_id).status == "verified"
    assert titles(site, "slow") == Counter({"slow-1": 1})


async def test_500_on_a_page_load_is_retried_and_succeeds(
    host: Any, site: FixtureSite, recipe: Path, tmp_path: Path
) -> None:
    site.set_fault("/posts/new", status=500, times=1)
    req = request(recipe, "retry", site.base_url, repeat=1)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(req, host=host, journal=journal)
    assert outcome.status == "verified"
    first = outcome.results[0].steps[0]
    assert (first.step_id, first.attempts) == ("title", 2)
    detail = readers.get_run(tmp_path / "journal.db", outcome.run_id)
    title = detail.iterations[0].steps[0]
    assert title.attempts == 2
    assert title.retry == {"attempts": 3, "max_seconds": 30.0, "on": ["navigation"]}
    assert "2 attempts" in readers.render_run(detail)


async def test_500_answer_to_a_submission_is_not_retried(
    host: Any, site: FixtureSite, recipe: Path, tmp_path: Path
) -> None:
    req = request(recipe, "no-retry", site.base_url, repeat=1)
    clock = Clock()
    with Journal.open(tmp_path / "journal.db", now=clock) as journal:
        # A first run proves the probe (its positive control): only then may it prove absence.
        proving = request(recipe, "proving", site.base_url, repeat=1)
        assert (await execute_run(proving, host=host, journal=journal)).status == "verified"
        site.set_fault("/posts", status=500, times=1)
        outcome = await execute_run(req, host=host, journal=journal)
        assert outcome.results[0].state == "unknown"
        publish = outcome.results[0].steps[-1]
        assert (publish.step_id, publish.attempts) == ("publish", 1)
        assert titles(site, "no-retry") == Counter()  # one POST, answered 500, not repeated
        clock.advance(PAST_SETTLE_S)  # absence is proven only after the settle period
        decisions = await reconcile_run(
            outcome.run_id, outcome.credential, req, host=host, journal=journal
        )
        assert [(d.iteration, d.state) for d in decisions] == [(1, "failed")]
        resumed = await resume_run(
            outcome.run_id, outcome.credential, req, host=host, journal=journal
        )
    assert resumed.status == "verified"
    assert titles(site, "no-retry") == Counter({"no-retry-1": 1})


async def test_upload_file_changed_between_iterations_stops_before_dispatch(
    host: Any, site: FixtureSite, recipe: Path, tmp_path: Path
) -> None:
    upload = tmp_path / "cover.txt"
    upload.write_text("first")
    req = request(recipe, "file", site.base_url, params=(f"attachment={upload}",))

    def change_file(result: Any) -> None:
        upload.write_text("changed")

    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(req, host=host, journal=journal, on_result=change_file)
    assert outcome.error is not None
    assert outcome.error.code == "FILE_CHANGED"
    assert isinstance(outcome.error, FileChanged)
    assert titles(site, "file") == Counter({"file-1": 1})


async def test_acting_on_a_run_needs_its_credential_and_binding(
    host: Any, site: FixtureSite, recipe: Path, tmp_path: Path
) -> None:
    site.set_fault("/posts", status=500, times=1)
    req = request(recipe, "cred", site.base_url, repeat=1)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(req, host=host, journal=journal)
        run_id = outcome.run_id
        for wrong in (None, "", "not-the-credential"):
            with pytest.raises(CredentialsInvalid):
                await reconcile_run(run_id, wrong, req, host=host, journal=journal)
            with pytest.raises(CredentialsInvalid):
                await resume_run(run_id, wrong, req, host=host, journal=journal)
            with pytest.raises(CredentialsInvalid):
                decide_iteration(run_id, wrong, 1, "failed", journal=journal)
        other_profile = request(
            recipe, "cred", site.base_url, repeat=1, profile=str(tmp_path / "state.json")
        )
        with pytest.raises(ProfileMismatch):
            await resume_run(run_id, outcome.credential, other_profile, host=host, journal=journal)
        decide_iteration(run_id, outcome.credential, 1, "failed", journal=journal)
        events = [e.name for e in readers.get_run(tmp_path / "journal.db", run_id).events]
        assert "person_decided" in events
        recipe.write_text(RECIPE.replace("timeout: 3000", "timeout: 3100"))
        changed = request(recipe, "cred", site.base_url, repeat=1)
        with pytest.raises(DefinitionChanged):
            await resume_run(run_id, outcome.credential, changed, host=host, journal=journal)
    assert titles(site, "cred") == Counter()


def test_credential_file_is_private(tmp_path: Path, recipe: Path) -> None:
    req = request(recipe, "private", "http://127.0.0.1:9", repeat=1)
    from northstar.run.execution import open_run

    with Journal.open(tmp_path / "journal.db") as journal:
        run_id, credential = open_run(req, journal)
        path = tmp_path / "runs" / run_id / "credential"
        assert path.read_text() == credential
        assert path.stat().st_mode & 0o777 == 0o600
        assert resolve_credential(journal, run_id, None) == credential
        assert run_options(journal, run_id, {})["repeat"] == 1
    assert credential.encode() not in (tmp_path / "journal.db").read_bytes()
