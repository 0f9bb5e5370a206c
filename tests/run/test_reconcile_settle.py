"""Reconcile never proves absence too early, and every run can be finished: real Chromium.

The fixture site's held requests make a save complete later than the step's timeout, at a
moment each test picks (``site.hold`` / ``release_held``); its submissions are the oracle.
Time is the journal's injected clock (``tests.run.clock``): it stamps when a submission was
sent and is the "now" reconcile and resume judge the settle period by, so no test waits.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.cli._inputs import build_request
from northstar.errors import OutcomeSettling, RunBlocked, UsageInvalid
from northstar.journal import Journal, SubmissionState
from northstar.run.execution import RunOutcome, RunRequest, execute_run
from northstar.run.recovery import (
    ReconcileDecision,
    decide_iteration,
    reconcile_run,
    resume_run,
)
from tests.run.clock import Clock
from tests.run.test_never_twice import NORTHSTAR, lines_until

pytestmark = pytest.mark.browser

SETTLE_S = 60

SLOW_SAVE = """
name: slow-save
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
    timeout: 2000
    settle: 60
    click: {target: {role: button, name: Publish}}
    effect: submit
    expect:
      - url: "**/posts?created=*"
      - text: {target: {role: status}, equals: "Post published: {{ prefix }}-{{ iteration }}"}
    reconcile:
      - goto: "/posts?q={{ prefix }}-{{ iteration }}"
      - check: {visible: {role: link, name: "{{ prefix }}-{{ iteration }}", exact: true}}
"""

# The same post, then a step on the page the post leads to (its own page).
THEN_VIEW = (
    SLOW_SAVE
    + """
  - id: open-post
    tab: admin
    timeout: 4000
    click: {target: {role: link, name: "{{ prefix }}-{{ iteration }}", exact: true}}
    expect:
      - visible: {role: heading, name: "{{ prefix }}-{{ iteration }}"}
"""
)


def write_recipe(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    return path


def request_for(recipe: Path, prefix: str, site: FixtureSite, repeat: int) -> RunRequest:
    return build_request(
        {
            "recipe": str(recipe),
            "params": (f"prefix={prefix}",),
            "repeat": repeat,
            "base_url": site.base_url,
        }
    )


def posts(site: FixtureSite, prefix: str) -> Counter[str]:
    return Counter(
        s["title"]
        for s in site.submissions()
        if s["kind"] == "post" and s["title"].startswith(prefix + "-")
    )


def one_each(prefix: str, count: int) -> Counter[str]:
    return Counter({f"{prefix}-{n}": 1 for n in range(1, count + 1)})


class Recovery:
    """Reconcile and resume one run, with the test's host and journal."""

    def __init__(
        self, host: Any, journal: Journal, run_id: str, credential: str, req: RunRequest
    ) -> None:
        self.host, self.journal, self.req = host, journal, req
        self.run_id, self.credential = run_id, credential

    async def reconcile(self) -> list[ReconcileDecision]:
        return await reconcile_run(
            self.run_id, self.credential, self.req, host=self.host, journal=self.journal
        )

    async def resume(self) -> RunOutcome:
        return await resume_run(
            self.run_id, self.credential, self.req, host=self.host, journal=self.journal
        )

    @property
    def status(self) -> str:
        return self.journal.run_record(self.run_id).status


async def start_held_run(
    host: Any, site: FixtureSite, journal: Journal, recipe: Path, prefix: str, repeat: int
) -> Recovery:
    """Run with the first save held: the step times out, the iteration is unknown.

    A run of the same recipe first proves its probe (a positive control): a probe never
    seen to find a known effect could not prove the post absent.
    """
    proving = await execute_run(
        request_for(recipe, f"{prefix}p", site, 1), host=host, journal=journal
    )
    assert proving.status == "verified"
    site.hold("/posts")
    req = request_for(recipe, prefix, site, repeat)
    outcome = await execute_run(req, host=host, journal=journal)
    assert outcome.status == "blocked"
    assert outcome.results[0].state == "unknown"
    site.wait_held(1)  # the post reached the server and waits there, unsaved
    assert posts(site, prefix) == Counter()
    return Recovery(host, journal, outcome.run_id, outcome.credential, req)


async def reconcile_early(recovery: Recovery, clock: Clock) -> None:
    """Too early: the probe does not find the post, and absence is not proven."""
    clock.advance(5)
    [decision] = await recovery.reconcile()
    submission = recovery.journal.submission(recovery.run_id, 1, "publish")
    assert submission is not None
    assert decision.state == "unknown"
    assert decision.code == "OUTCOME_SETTLING"
    assert decision.verdicts == (("publish", "settling"),)
    assert decision.decidable_at == submission.sent + timedelta(seconds=SETTLE_S)
    assert decision.decidable_at.isoformat(timespec="seconds") in decision.reason
    assert recovery.status == "blocked"
    with pytest.raises(OutcomeSettling) as refused:  # resume re-checks before sending
        await recovery.resume()
    assert decision.decidable_at.isoformat(timespec="seconds") in refused.value.message


async def saved_found_early(r: Recovery, site: FixtureSite, clock: Clock) -> None:
    await reconcile_early(r, clock)
    site.release_held(save=True)  # the slow save completes, still inside the settle period
    [decision] = await r.reconcile()
    assert (decision.state, decision.verdicts) == ("verified", (("publish", "found"),))


async def dropped_proven_absent_late(r: Recovery, site: FixtureSite, clock: Clock) -> None:
    await reconcile_early(r, clock)
    site.release_held(save=False)  # the server gave up on it: nothing was saved
    [decision] = await r.reconcile()  # still early: the same answer
    assert decision.state == "unknown"
    clock.advance(SETTLE_S)
    [decision] = await r.reconcile()
    assert (decision.state, decision.verdicts) == ("failed", (("publish", "absent"),))


async def saved_found_late(r: Recovery, site: FixtureSite, clock: Clock) -> None:
    site.release_held(save=True)
    clock.advance(SETTLE_S + 1)
    [decision] = await r.reconcile()
    assert (decision.state, decision.verdicts) == ("verified", (("publish", "found"),))


async def saved_after_absence_was_proven(r: Recovery, site: FixtureSite, clock: Clock) -> None:
    """A save later than the settle period: reconcile says absent, resume's re-check finds it."""
    clock.advance(SETTLE_S + 1)
    [decision] = await r.reconcile()
    assert (decision.state, decision.verdicts) == ("failed", (("publish", "absent"),))
    site.release_held(save=True)


async def dropped_person_marks_it_failed_early(
    r: Recovery, site: FixtureSite, clock: Clock
) -> None:
    """Inside the settle period a person may say "it did not happen": that is not re-probed."""
    await reconcile_early(r, clock)
    site.release_held(save=False)
    decide_iteration(r.run_id, r.credential, 1, "failed", journal=r.journal)


ORDERINGS: dict[str, Callable[[Recovery, FixtureSite, Clock], Any]] = {
    "saved, reconcile early then again": saved_found_early,
    "dropped, reconcile early then late": dropped_proven_absent_late,
    "saved, reconcile late": saved_found_late,
    "saved after absence was proven": saved_after_absence_was_proven,
    "dropped, a person marks it failed early": dropped_person_marks_it_failed_early,
}


@pytest.mark.parametrize("ordering", list(ORDERINGS))
async def test_a_slow_save_ends_with_exactly_one_entry_per_iteration(
    host: Any, site: FixtureSite, tmp_path: Path, ordering: str
) -> None:
    clock = Clock()
    recipe = write_recipe(tmp_path, SLOW_SAVE)
    prefix = f"o{list(ORDERINGS).index(ordering)}"
    with Journal.open(tmp_path / "journal.db", now=clock) as journal:
        recovery = await start_held_run(host, site, journal, recipe, prefix, repeat=2)
        await ORDERINGS[ordering](recovery, site, clock)
        resumed = await recovery.resume()
        assert resumed.status == "verified", resumed.error
        with pytest.raises(UsageInvalid):  # resume twice: nothing left, nothing sent
            await recovery.resume()
        submission = journal.submission(recovery.run_id, 1, "publish")
    assert submission is not None
    assert submission.state is SubmissionState.VERIFIED
    assert posts(site, prefix) == one_each(prefix, 2)


async def test_the_page_after_a_verified_submission_failing_is_continued_not_resent(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    """A 500 on the step after the post: resume goes on from the post's result page."""
    site.set_fault("/posts/1", status=500, times=2)  # the post's own page fails twice
    req = request_for(write_recipe(tmp_path, THEN_VIEW), "v", site, repeat=1)
    with Journal.open(tmp_path / "journal.db") as journal:
        outcome = await execute_run(req, host=host, journal=journal)
        first = outcome.results[0]
        assert (first.state, first.failing_step) == ("failed", "open-post")
        recorded = journal.submission(outcome.run_id, 1, "publish")
        assert recorded is not None
        assert recorded.state is SubmissionState.VERIFIED
        assert recorded.result_url == f"{site.base_url}/posts?created=v-1"
        recovery = Recovery(host, journal, outcome.run_id, outcome.credential, req)
        assert await recovery.reconcile() == []  # nothing unknown: nothing to probe
        again = await recovery.resume()  # the page still fails: a real error, not a loop
        assert again.results[0].failing_step == "open-post"
        assert again.results[0].reason_code == "EXPECTATION_FAILED"
        resumed = await recovery.resume()
    assert resumed.status == "verified", resumed.error
    steps = [s.step_id for s in resumed.results[0].steps]
    assert steps == ["publish.reopen", "open-post", "done_when"]
    assert all(r.reason_code != "TARGET_MISSING" for r in (*again.results, *resumed.results))
    assert posts(site, "v") == one_each("v", 1)


def kill_on_the_step_after_the_post(recipe: Path, site: FixtureSite, journal_path: Path) -> str:
    """Run a worker until the post's own page is requested, SIGKILL it there; the run id."""
    site.hold("/posts/1")  # the step after the post waits there until the worker is killed
    worker = subprocess.Popen(
        [*NORTHSTAR, "run", str(recipe), "-p", "prefix=k", "--base-url", site.base_url],
        env={**os.environ, "NORTHSTAR_JOURNAL": str(journal_path)},
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert worker.stderr is not None
    run_id = lines_until(worker.stderr, "run r-").split()[1]
    site.wait_held(1, timeout_s=60)
    worker.send_signal(signal.SIGKILL)
    worker.communicate(timeout=60)
    site.release_held(save=False)
    return run_id


async def test_a_worker_killed_after_its_submission_was_verified_is_finished_by_resume(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    """Killed on the step after the post: reconcile says so, resume finishes it once."""
    recipe = write_recipe(tmp_path, THEN_VIEW)
    journal_path = tmp_path / "journal.db"
    run_id = kill_on_the_step_after_the_post(recipe, site, journal_path)
    req = request_for(recipe, "k", site, repeat=1)
    with Journal.open(journal_path) as journal:
        credential = (tmp_path / "runs" / run_id / "credential").read_text()
        recovery = Recovery(host, journal, run_id, credential, req)
        [decision] = await recovery.reconcile()
        assert (decision.state, decision.code) == ("stopped", "SUBMITTED_NOT_FINISHED")
        assert f"{site.base_url}/posts?created=k-1" in decision.reason
        resumed = await recovery.resume()
    assert resumed.status == "verified", resumed.error
    assert [s.step_id for s in resumed.results[0].steps][:2] == ["publish.reopen", "open-post"]
    assert posts(site, "k") == one_each("k", 1)


@pytest.mark.parametrize("declared", [False, True], ids=["no-entry-point", "after_submit"])
async def test_a_probe_found_submission_continues_at_after_submit_or_goes_to_review(
    host: Any, site: FixtureSite, tmp_path: Path, declared: bool
) -> None:
    """Verified by the probe, its result page never seen: only a declared entry point helps."""
    text = THEN_VIEW
    if declared:
        text = text.replace(
            "    settle: 60\n",
            '    settle: 60\n    after_submit: "/posts?created={{ prefix }}-{{ iteration }}"\n',
        )
    prefix = "a" if declared else "n"
    with Journal.open(tmp_path / "journal.db") as journal:
        recovery = await start_held_run(
            host, site, journal, write_recipe(tmp_path, text), prefix, repeat=1
        )
        site.release_held(save=True)
        [decision] = await recovery.reconcile()
        if declared:
            assert (decision.state, decision.code) == ("stopped", "SUBMITTED_NOT_FINISHED")
            resumed = await recovery.resume()
            assert resumed.status == "verified", resumed.error
        else:
            assert (decision.state, decision.code) == ("needs_review", "RESUME_POINT_UNKNOWN")
            assert "after_submit" in decision.reason
            assert recovery.status == "needs_review"
            with pytest.raises(RunBlocked):
                await recovery.resume()
            # What a person does once they finished the rest by hand (README: Never twice).
            run_id, credential = recovery.run_id, recovery.credential
            decide_iteration(run_id, credential, 1, "verified", journal=journal)
            assert recovery.status == "verified"
    assert posts(site, prefix) == one_each(prefix, 1)
