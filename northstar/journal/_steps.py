"""SQL for steps, their transitions and submissions; called inside a writer transaction.

Shared by ``JournalRecorder`` (the runner's live reports) and ``Journal.finish_iteration``
(which fills in steps the runner reported only in its result, such as ``done_when``).
Evidence and errors are scrubbed of the plan's secret values before they are written.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import asdict
from typing import Any

from northstar.errors import JournalError
from northstar.journal._db import JournalDb
from northstar.journal.schema import StepEvent, SubmissionState
from northstar.journal.submissions import (
    RecordedSubmission,
    SubmissionVerdict,
    submission_verdict,
)
from northstar.redaction import redact_data
from northstar.results import StepResult, StepStatus

__all__ = [
    "add_event",
    "dispatch_submission",
    "ensure_step",
    "finish_step",
    "has_final_event",
    "open_submission",
    "submission_key",
    "to_json",
]

_FINAL_EVENTS = {
    StepStatus.PASSED: StepEvent.PASSED,
    StepStatus.FAILED: StepEvent.FAILED,
    StepStatus.SKIPPED: StepEvent.SKIPPED,
}


def submission_key(run_id: str, iteration: int, step_id: str) -> str:
    """The idempotency key of a step's submission: one per run, iteration and step."""
    return f"{run_id}/{iteration}/{step_id}"


def ensure_step(
    db: JournalDb,
    run_id: str,
    iteration: int,
    step_id: str,
    *,
    tab: str,
    kind: str,
    seq: int | None,
    retry_json: str | None = None,
) -> None:
    """The step's row, once; without a known ``seq`` it goes after the steps recorded so far."""
    db.conn.execute(
        "INSERT INTO steps (run_id, iteration, step_id, tab, kind, seq, retry_json) "
        "VALUES (?, ?, ?, ?, ?, COALESCE(?, "
        "(SELECT COALESCE(MAX(seq), -1) + 1 FROM steps WHERE run_id = ? AND iteration = ?)), "
        "?) ON CONFLICT DO NOTHING",
        (run_id, iteration, step_id, tab, kind, seq, run_id, iteration, retry_json),
    )


def add_event(
    db: JournalDb,
    run_id: str,
    iteration: int,
    step_id: str,
    event: StepEvent,
    *,
    duration_ms: float | None = None,
    evidence_json: str | None = None,
    error_json: str | None = None,
    attempts: int | None = None,
) -> None:
    db.conn.execute(
        "INSERT INTO step_events (run_id, iteration, step_id, event, at, duration_ms, "
        "evidence_json, error_json, attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run_id,
            iteration,
            step_id,
            event.value,
            db.stamp(),
            duration_ms,
            evidence_json,
            error_json,
            attempts,
        ),
    )


def finish_step(
    db: JournalDb, run_id: str, iteration: int, result: StepResult, secrets: Collection[str]
) -> None:
    """The step's final transition with its evidence and error; settles its submission."""
    event = _FINAL_EVENTS.get(result.status)
    if event is None:
        raise JournalError(
            f"reported as finished while still {result.status.value!r}",
            run_id=run_id,
            iteration=iteration,
            step=result.step_id,
            fix="Report a step as finished only once it passed, failed or was skipped.",
        )
    ensure_step(db, run_id, iteration, result.step_id, tab=result.tab, kind=result.kind, seq=None)
    evidence = [asdict(item) for item in result.evidence]
    error = None if result.error is None else to_json(result.error, secrets)
    add_event(
        db,
        run_id,
        iteration,
        result.step_id,
        event,
        duration_ms=result.duration_ms,
        evidence_json=to_json(evidence, secrets),
        error_json=error,
        attempts=result.attempts,
    )
    key = submission_key(run_id, iteration, result.step_id)
    not_sent = result.error is not None and result.error.get("code") == "NOT_SENT"
    _settle_submission(db, key, event, result.result_url, not_sent=not_sent)


def has_final_event(db: JournalDb, run_id: str, iteration: int, step_id: str) -> bool:
    row = db.conn.execute(
        "SELECT 1 FROM step_events WHERE run_id = ? AND iteration = ? AND step_id = ? "
        "AND event IN ('passed', 'failed', 'skipped') LIMIT 1",
        (run_id, iteration, step_id),
    ).fetchone()
    return row is not None


def open_submission(
    db: JournalDb, run_id: str, iteration: int, step_id: str, input_fingerprint: str
) -> bool:
    """Record the submission as in flight; ``False`` if its key is already verified.

    What may be sent is ``submission_verdict``'s to say (asked here, inside the writer's
    transaction, so no two writers decide at once); a refusal raises and records nothing.
    """
    key = submission_key(run_id, iteration, step_id)
    row = db.conn.execute(
        "SELECT state, input_fingerprint FROM submissions WHERE idempotency_key = ?", (key,)
    ).fetchone()
    recorded = None if row is None else RecordedSubmission(*row)
    verdict = submission_verdict(
        recorded,
        input_fingerprint,
        name=key,
        unknown_fix="Reconcile the run (`northstar reconcile RUN_ID`) before dispatching again.",
        run_id=run_id,
        iteration=iteration,
        step=step_id,
    )
    now = db.stamp()
    if verdict is SubmissionVerdict.SEND:
        db.conn.execute(
            "INSERT INTO submissions (idempotency_key, run_id, iteration, step_id, "
            "input_fingerprint, state, created_at, updated_at, sent_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                run_id,
                iteration,
                step_id,
                input_fingerprint,
                SubmissionState.IN_FLIGHT,
                now,
                now,
                now,
            ),
        )
    elif verdict is SubmissionVerdict.SEND_AGAIN:
        db.conn.execute(
            "UPDATE submissions SET state = ?, updated_at = ?, sent_at = ?, result_url = NULL, "
            "decided_by = NULL WHERE idempotency_key = ?",
            (SubmissionState.IN_FLIGHT, now, now, key),
        )
    return verdict.sends


def dispatch_submission(db: JournalDb, run_id: str, iteration: int, step_id: str) -> None:
    """The action returned: the submission left the browser; its settle period starts now."""
    key = submission_key(run_id, iteration, step_id)
    now = db.stamp()
    changed = db.conn.execute(
        "UPDATE submissions SET state = 'dispatched', updated_at = ?, sent_at = ? "
        "WHERE idempotency_key = ? AND state = 'in_flight'",
        (now, now, key),
    ).rowcount
    if changed == 0:
        raise JournalError(
            f"submission {key} was not in flight when it was dispatched",
            run_id=run_id,
            iteration=iteration,
            step=step_id,
            fix="Record the submission as in flight before the action that dispatches it.",
        )


def _settle_submission(
    db: JournalDb, key: str, event: StepEvent, result_url: str | None, *, not_sent: bool = False
) -> None:
    """A passed step verifies its submission; a failure after dispatch leaves it unknown,
    except one the browser showed was never sent (``NOT_SENT``): that one failed, safely.

    A submission still in flight when its step failed stays ``in_flight``: the click may
    or may not have happened, which only reconciliation can tell. A verified one keeps
    the URL its tab showed (``result_url``), where a resume continues after it.
    """
    if event is StepEvent.PASSED:
        db.conn.execute(
            "UPDATE submissions SET state = ?, updated_at = ?, result_url = ? "
            "WHERE idempotency_key = ? AND state IN ('in_flight', 'dispatched')",
            (SubmissionState.VERIFIED, db.stamp(), result_url, key),
        )
        return
    state = SubmissionState.FAILED if not_sent else SubmissionState.UNKNOWN
    db.conn.execute(
        "UPDATE submissions SET state = ?, updated_at = ? "
        "WHERE idempotency_key = ? AND state = 'dispatched'",
        (state, db.stamp(), key),
    )


def to_json(value: Any, secrets: Collection[str]) -> str:
    """Compact JSON with every secret value replaced, wherever it sits in the structure."""
    return json.dumps(redact_data(value, secrets), default=str, separators=(",", ":"))
