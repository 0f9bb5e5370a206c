"""The distributed worker's decisions, over plain data (no browser, no database)."""

from __future__ import annotations

from collections import Counter

import pytest

from northstar.distributed.decisions import (
    ClaimAction,
    claim_action,
    finished_status,
    queued_row,
    submitted_files,
    worker_row,
    workflow_id,
)
from northstar.errors import ParamMissing
from northstar.journal import RunStatus
from northstar.recipe.model import Param
from northstar.results import IterationState as S


def test_one_workflow_id_per_run_and_iteration() -> None:
    assert workflow_id("r-1", 2) == workflow_id("r-1", 2) != workflow_id("r-1", 3)
    assert workflow_id("r-1", 12) != workflow_id("r-11", 2)


@pytest.mark.parametrize(
    ("run_status", "state", "open_submissions", "action"),
    [
        ("running", None, 0, ClaimAction.RUN),  # first time
        ("running", S.RUNNING, 0, ClaimAction.RUN),  # its worker died before dispatching
        ("running", S.RUNNING, 1, ClaimAction.BLOCK),  # died with a submission in flight
        ("running", S.PENDING, 2, ClaimAction.BLOCK),
        ("running", S.VERIFIED, 0, ClaimAction.RECORDED),  # never done twice
        ("blocked", S.FAILED, 0, ClaimAction.RECORDED),  # repeat is not retry
        ("blocked", None, 0, ClaimAction.SKIP),  # the run waits for reconcile
        ("blocked", S.RUNNING, 1, ClaimAction.BLOCK),  # another lane blocked it first
        ("blocked", S.RUNNING, 0, ClaimAction.STOP),  # nothing sent: stopped, for resume
        ("failed", None, 0, ClaimAction.SKIP),
    ],
)
def test_claim_action(
    run_status: str, state: S | None, open_submissions: int, action: ClaimAction
) -> None:
    assert claim_action(run_status, state, open_submissions) is action


@pytest.mark.parametrize(
    ("run_status", "state", "open_submissions", "action"),
    [
        ("running", None, 0, ClaimAction.SKIP),  # the resuming process will start it
        ("running", S.RUNNING, 0, ClaimAction.SKIP),  # the resuming process runs it now
        ("running", S.RUNNING, 1, ClaimAction.SKIP),  # not blocked behind its back either
        ("blocked", None, 0, ClaimAction.SKIP),
        ("running", S.VERIFIED, 0, ClaimAction.RECORDED),
    ],
)
def test_a_run_resumed_elsewhere_is_left_to_the_resuming_process(
    run_status: str, state: S | None, open_submissions: int, action: ClaimAction
) -> None:
    assert claim_action(run_status, state, open_submissions, ours=False) is action


def test_the_run_finishes_only_when_every_iteration_is_settled() -> None:
    assert finished_status(Counter([S.VERIFIED, S.RUNNING]), 2) is None
    assert finished_status(Counter([S.VERIFIED]), 2) is None
    assert finished_status(Counter([S.VERIFIED, S.VERIFIED]), 2) is RunStatus.VERIFIED
    assert finished_status(Counter([S.VERIFIED, S.FAILED, S.STOPPED]), 3) is RunStatus.FAILED
    assert finished_status(Counter([S.NEEDS_REVIEW, S.FAILED]), 2) is RunStatus.NEEDS_REVIEW


def test_an_unknown_outcome_blocks_the_run_at_once() -> None:
    assert finished_status(Counter([S.UNKNOWN, S.RUNNING]), 5) is RunStatus.BLOCKED


SPECS = {"title": Param(), "password": Param(secret=True, required=True)}


def test_secrets_never_go_to_the_queue_and_come_from_the_workers_environment() -> None:
    row = {"title": "Hello", "password": "pw-1"}
    queued = queued_row(SPECS, row)
    assert queued == {"title": "Hello"}
    environ = {"NORTHSTAR_SECRET_PASSWORD": "pw-1"}
    assert worker_row(SPECS, queued, environ) == row
    with pytest.raises(ParamMissing, match="NORTHSTAR_SECRET_PASSWORD"):
        worker_row(SPECS, queued, {})


def test_submitted_files_are_the_rows_digests_or_none_when_the_run_recorded_none() -> None:
    queued = {"queue": "q", "files": {"fp-1": ["d1", "d2"]}}
    assert submitted_files(queued, "fp-1") == ("d1", "d2")
    assert submitted_files(queued, "fp-2") == ()  # a row that selects no file
    assert submitted_files({"queue": "q"}, "fp-1") is None  # queued before files were kept
    assert submitted_files(None, "fp-1") is None
