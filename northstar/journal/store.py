"""``Journal``: the durable writer of runs, iterations, outputs, submissions and events.

One ``Journal`` per worker process, used from one thread. Every method commits before
it returns; methods that write several rows do so in one ``BEGIN IMMEDIATE`` transaction.
Readers never use this class: they open the file read-only through ``northstar.readers``.

What is never stored: secret parameter values and the run's credential. Callers pass a
``params_fingerprint`` in which secret values are already hashed (``Plan.params_fingerprint``
is one) and the journal stores it as given; ``options`` must not carry secret values either.
The credential is returned once by ``create_run``; only its sha256 is kept.

The same class writes an SQLite file or a Postgres database (``Journal.open`` with a
``postgresql://`` URL): the SQL is shared, ``northstar.journal.postgres`` adapts it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from northstar.errors import (
    CredentialsInvalid,
    JournalError,
    NorthstarError,
    OutputSaveFailed,
    RunNotFound,
)
from northstar.journal import _diagnoses, _probe_controls, _steps
from northstar.journal._db import Clock, JournalDb, sqlite_errors, utc_now, worker_identity
from northstar.journal._diagnoses import FixProposal
from northstar.journal._probe_controls import ProbeControl
from northstar.journal.paths import resolve_journal
from northstar.journal.schema import RunStatus, SubmissionState
from northstar.journal.step_log import StepLog
from northstar.redaction import redact
from northstar.results import IterationResult, IterationState

__all__ = ["Journal", "RunRecord", "SubmissionRecord", "credential_hash", "new_run_id"]


def new_run_id() -> str:
    """``r-`` and 12 hex characters: short enough to type, random enough not to collide."""
    return "r-" + secrets.token_hex(6)


def credential_hash(credential: str) -> str:
    """sha256 of the credential: it is 256 random bits, so a fast hash cannot be brute-forced."""
    return hashlib.sha256(credential.encode()).hexdigest()


# The reason code of a failed iteration a person skipped; a resume does not run it again.
SKIPPED = "SKIPPED"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run's binding and status, for reconcile and resume."""

    run_id: str
    recipe_path: str
    definition_hash: str
    project: str
    profile: str
    params_fingerprint: str
    total_iterations: int
    options: dict[str, Any]
    status: str
    worker_pid: int | None
    worker_host: str | None


@dataclass(frozen=True, slots=True)
class SubmissionRecord:
    """A submission as the journal knows it (see ``northstar.journal.schema.SubmissionState``)."""

    idempotency_key: str
    run_id: str
    iteration: int
    step_id: str
    input_fingerprint: str
    state: SubmissionState
    created_at: str
    updated_at: str
    sent_at: str = ""  # when it last went in flight or was dispatched: settle counts from here
    result_url: str | None = None  # its tab's URL once verified by its own step
    decided_by: str | None = None  # "probe" or "person" when reconciled

    @property
    def sent(self) -> datetime:
        return datetime.fromisoformat(self.sent_at or self.updated_at)


_SUBMISSION_COLUMNS = (
    "idempotency_key, run_id, iteration, step_id, input_fingerprint, state, created_at, "
    "updated_at, sent_at, result_url, decided_by"
)


def _submission(row: tuple[Any, ...]) -> SubmissionRecord:
    key, run, number, step, fingerprint, state, created, updated, sent, url, decided = row
    state = SubmissionState(state)
    return SubmissionRecord(
        key, run, number, step, fingerprint, state, created, updated, sent or "", url, decided
    )


class Journal:
    """The writer; open it with ``Journal.open()`` and close it (or use ``with``)."""

    def __init__(self, db: JournalDb) -> None:
        self._db = db

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, *, now: Clock = utc_now) -> Journal:
        """Open or create the journal (a file, or a ``postgresql://`` URL) and migrate it."""
        return cls(JournalDb.open(resolve_journal(path), now))

    @property
    def path(self) -> Path:
        """The SQLite file; for a Postgres journal, the local anchor of its runs' files."""
        return self._db.path

    @property
    def location(self) -> str:
        """Where the journal is, to show a person: its path, or its URL without the password."""
        return self._db.location

    def close(self) -> None:
        self._db.close()

    def now(self) -> datetime:
        """The journal's clock: settle periods are measured with the clock that stamped them."""
        return self._db.now()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # Runs

    def create_run(
        self,
        *,
        recipe_path: str,
        recipe_name: str,
        definition_hash: str,
        project: str,
        profile: str,
        params_fingerprint: str,
        total_iterations: int,
        options: Mapping[str, Any],
    ) -> tuple[str, str]:
        """Record a new running run; return ``(run_id, credential)``, the credential only once."""
        run_id, credential = new_run_id(), secrets.token_urlsafe(32)
        pid, host = worker_identity()
        now = self._db.stamp()
        self._db.execute(
            "create the run",
            "INSERT INTO runs (run_id, recipe_path, recipe_name, definition_hash, project, "
            "profile, params_fingerprint, credential_hash, total_iterations, options_json, "
            "status, worker_pid, worker_host, started_at, heartbeat_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)",
            (
                run_id,
                recipe_path,
                recipe_name,
                definition_hash,
                project,
                profile,
                params_fingerprint,
                credential_hash(credential),
                total_iterations,
                json.dumps(dict(options), sort_keys=True, default=str),
                pid,
                host,
                now,
                now,
            ),
        )
        return run_id, credential

    def check_credential(self, run_id: str, credential: str | None) -> None:
        """Raise ``CredentialsInvalid`` unless ``credential`` is the run's (constant-time)."""
        row = self._db.one("SELECT credential_hash FROM runs WHERE run_id = ?", (run_id,))
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in the journal", run_id=run_id)
        if not credential or not hmac.compare_digest(credential_hash(credential), row[0]):
            raise CredentialsInvalid("the run's credential is missing or wrong", run_id=run_id)

    def finish_run(self, run_id: str, status: RunStatus | str) -> None:
        """Set the run's final status (or back to ``running`` on resume, which clears the end)."""
        final = _run_status(status)
        ended = None if final is RunStatus.RUNNING else self._db.stamp()
        cursor = self._db.execute(
            "finish the run",
            "UPDATE runs SET status = ?, ended_at = ? WHERE run_id = ?",
            (final.value, ended, run_id),
        )
        _require(cursor.rowcount, run_id)

    def finish_run_when(
        self, run_id: str, decide: Callable[[Counter[IterationState]], RunStatus | None]
    ) -> RunStatus | None:
        """Set the status ``decide`` returns from the iterations' states, if the run still runs.

        For lanes on several workers: the run's row is locked first, so the last lane to
        settle an iteration sees every other lane's verdict and no two lanes decide at once.
        ``decide`` gets the count of iterations per state: one row per state comes back,
        not one per iteration, since this runs after every iteration of a long run.
        """
        with self._db.transaction("finish the run", run_id=run_id):
            locked = self._db.conn.execute(
                "UPDATE runs SET heartbeat_at = ? WHERE run_id = ? AND status = 'running'",
                (self._db.stamp(), run_id),
            ).rowcount
            if locked == 0:
                return None
            rows = self._db.conn.execute(
                "SELECT state, count(*) FROM iterations WHERE run_id = ? GROUP BY state",
                (run_id,),
            ).fetchall()
            final = decide(Counter({IterationState(state): int(n) for state, n in rows}))
            if final is not None:
                self._db.conn.execute(
                    "UPDATE runs SET status = ?, ended_at = ? WHERE run_id = ?",
                    (final.value, self._db.stamp(), run_id),
                )
            return final

    def event(self, run_id: str, name: str, **payload: Any) -> None:
        """Append to the run's event log; ``payload`` must not carry secret values."""
        self._db.execute(
            "record an event",
            "INSERT INTO events (run_id, at, name, payload_json) VALUES (?, ?, ?, ?)",
            (run_id, self._db.stamp(), name, json.dumps(payload, sort_keys=True, default=str)),
        )

    def record_stop(self, run_id: str, error: NorthstarError) -> None:
        """Why the whole run stopped (its binding broke): the ``run_stopped`` event.

        The error's code, message, fix and context (iteration, file, URL) are what a
        reader shows as the run's ending; ``run_resumed`` after it makes it history.
        """
        payload = {k: v for k, v in error.to_dict().items() if k != "run_id"}
        self.event(run_id, "run_stopped", **payload)

    def serving_queue(self, run_id: str) -> str | None:
        """The queue whose workers serve the run now, from its last ``run_queued`` event.

        ``None`` for a run of one process, and once a local ``resume`` took a queued run
        over (its ``run_resumed`` comes later). The readers run the same query.
        """
        row = self._db.one(
            "SELECT payload_json FROM events WHERE run_id = ? "
            "AND name IN ('run_queued', 'run_resumed') ORDER BY id DESC LIMIT 1",
            (run_id,),
        )
        queue = json.loads(row[0]).get("queue") if row is not None else None
        return queue if isinstance(queue, str) and queue else None

    def first_event(self, run_id: str, name: str) -> dict[str, Any] | None:
        """The payload of the run's first event called ``name``, or ``None``."""
        row = self._db.one(
            "SELECT payload_json FROM events WHERE run_id = ? AND name = ? ORDER BY id LIMIT 1",
            (run_id, name),
        )
        payload = json.loads(row[0]) if row is not None else None
        return payload if isinstance(payload, dict) else None

    # Iterations

    def start_iteration(
        self,
        run_id: str,
        number: int,
        *,
        params_fingerprint: str,
        lane: int | None = None,
        row: Mapping[str, str] | None = None,
    ) -> None:
        """Mark iteration ``number`` running, claimed by this process (pid, host).

        ``row`` is the values it runs with, secrets already ``[redacted]`` by the caller
        (``Plan.row_values``), kept so readers can name the row.
        """
        row_json = None if row is None else json.dumps(dict(row), ensure_ascii=False)
        pid, host = worker_identity()
        now = self._db.stamp()
        with self._db.transaction("start the iteration", run_id=run_id, iteration=number):
            claimed = self._db.conn.execute(
                "UPDATE runs SET worker_pid = ?, worker_host = ?, heartbeat_at = ? "
                "WHERE run_id = ?",
                (pid, host, now, run_id),
            ).rowcount
            _require(claimed, run_id)
            self._refuse_restart(run_id, number)
            self._db.conn.execute(
                "INSERT INTO iterations (run_id, number, state, lane, params_fingerprint, "
                "started_at, row_json) VALUES (?, ?, 'running', ?, ?, ?, ?) "
                "ON CONFLICT (run_id, number) DO UPDATE SET state = 'running', "
                "lane = excluded.lane, params_fingerprint = excluded.params_fingerprint, "
                "started_at = excluded.started_at, row_json = excluded.row_json",
                (run_id, number, lane, params_fingerprint, now, row_json),
            )

    def finish_iteration(
        self, run_id: str, result: IterationResult, *, secrets: Collection[str] = ()
    ) -> None:
        """Write the verdict and fill in steps the runner reported only in ``result``.

        ``secrets`` (``Plan.secrets``) are scrubbed from the reason and evidence written here.
        Outputs are saved separately with ``save_outputs``.
        """
        number = result.iteration
        _require_final(result.state, run_id, number)
        with self._db.transaction("finish the iteration", run_id=run_id, iteration=number):
            updated = self._db.conn.execute(
                "UPDATE iterations SET state = ?, ended_at = ?, duration_ms = ?, "
                "reason_code = ?, reason = ?, failing_step = ?, evidence_count = ?, "
                "model_calls = ? WHERE run_id = ? AND number = ?",
                (
                    result.state.value,
                    self._db.stamp(),
                    result.duration_ms,
                    result.reason_code,
                    None if result.reason is None else redact(result.reason, secrets),
                    result.failing_step,
                    result.evidence_count,
                    result.model_calls,
                    run_id,
                    number,
                ),
            ).rowcount
            _require_iteration(updated, run_id, number)
            for step in result.steps:
                if not _steps.has_final_event(self._db, run_id, number, step.step_id):
                    _steps.finish_step(self._db, run_id, number, step, secrets)

    def mark_iteration(
        self,
        run_id: str,
        number: int,
        state: IterationState,
        *,
        reason_code: str | None = None,
        reason: str | None = None,
    ) -> None:
        """Change an iteration's state (e.g. ``needs_review`` when its outputs were not saved)."""
        ended = self._db.stamp() if state.is_final else None
        cursor = self._db.execute(
            "mark the iteration",
            "UPDATE iterations SET state = ?, ended_at = COALESCE(?, ended_at), "
            "reason_code = COALESCE(?, reason_code), reason = COALESCE(?, reason) "
            "WHERE run_id = ? AND number = ?",
            (state.value, ended, reason_code, reason, run_id, number),
        )
        _require_iteration(cursor.rowcount, run_id, number)

    def save_outputs(self, run_id: str, number: int, outputs: Mapping[str, str]) -> None:
        """Save an iteration's outputs together; failure is ``OutputSaveFailed`` (needs review)."""
        try:
            with self._db.transaction("save the outputs", run_id=run_id, iteration=number):
                self._db.conn.executemany(
                    "INSERT INTO outputs (run_id, iteration, name, value) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (run_id, iteration, name) DO UPDATE SET value = excluded.value",
                    [(run_id, number, name, str(value)) for name, value in outputs.items()],
                )
        except JournalError as exc:
            raise OutputSaveFailed(
                f"the outputs could not be saved in the journal: {exc.message}",
                run_id=run_id,
                iteration=number,
            ) from exc

    # Fix proposals (see northstar.run.fixes)

    def add_fix_proposal(self, proposal: FixProposal, *, added: int, removed: int) -> int:
        """Store a proposal for a person to review; its id."""
        return _diagnoses.insert_proposal(self._db, proposal, added, removed)

    def fix_proposal(self, proposal_id: int) -> FixProposal | None:
        return _diagnoses.proposal(self._db, proposal_id)

    def mark_fix_applied(self, proposal_id: int, definition_hash: str) -> None:
        _diagnoses.mark_applied(self._db, proposal_id, definition_hash)

    # Positive controls of reconcile probes (see northstar.run.probe_controls)

    def record_probe_control(self, control: ProbeControl, *, secrets: Collection[str]) -> None:
        """Keep a probe's latest control for its recipe definition, base URL and step."""
        _probe_controls.record_probe_control(self._db, control, secrets)

    def probe_control(
        self, definition_hash: str, base_url: str, step_id: str
    ) -> ProbeControl | None:
        """A submit step's latest probe control; ``None``: its probe was never tried."""
        return _probe_controls.probe_control(self._db, definition_hash, base_url, step_id)

    def probe_controls(self, definition_hash: str) -> list[ProbeControl]:
        """Every probe control of a recipe definition."""
        return _probe_controls.probe_controls(self._db, definition_hash)

    # Steps and submissions

    def steps(self, run_id: str) -> StepLog:
        """The step records of ``run_id`` (``northstar.run.recorder`` feeds them a plan's steps)."""
        return StepLog(self._db, run_id)

    def submission(self, run_id: str, iteration: int, step_id: str) -> SubmissionRecord | None:
        """What the journal knows of a step's submission, if anything."""
        key = _steps.submission_key(run_id, iteration, step_id)
        row = self._db.one(
            f"SELECT {_SUBMISSION_COLUMNS} FROM submissions WHERE idempotency_key = ?", (key,)
        )
        return None if row is None else _submission(row)

    def iteration_submissions(self, run_id: str, iteration: int) -> list[SubmissionRecord]:
        """Every submission of an iteration, whatever its state, oldest first."""
        with sqlite_errors("read the submissions"):
            rows = self._db.conn.execute(
                f"SELECT {_SUBMISSION_COLUMNS} FROM submissions WHERE run_id = ? "
                "AND iteration = ? ORDER BY created_at",
                (run_id, iteration),
            ).fetchall()
        return [_submission(row) for row in rows]

    def set_submission_state(
        self,
        run_id: str,
        iteration: int,
        step_id: str,
        state: SubmissionState,
        *,
        decided_by: str | None = None,
    ) -> None:
        """Record a reconciled outcome (e.g. ``verified`` or ``failed`` after a probe).

        ``decided_by`` says who settled it: ``probe`` (reconcile) or ``person`` (``--mark``).
        """
        key = _steps.submission_key(run_id, iteration, step_id)
        cursor = self._db.execute(
            "update the submission",
            "UPDATE submissions SET state = ?, updated_at = ?, decided_by = ? "
            "WHERE idempotency_key = ?",
            (SubmissionState(state).value, self._db.stamp(), decided_by, key),
        )
        if cursor.rowcount == 0:
            raise JournalError(f"no submission {key} in the journal", run_id=run_id, step=step_id)

    def run_record(self, run_id: str) -> RunRecord:
        """The run's binding and status, as recorded when it started."""
        row = self._db.one(
            "SELECT run_id, recipe_path, definition_hash, project, profile, params_fingerprint, "
            "total_iterations, options_json, status, worker_pid, worker_host "
            "FROM runs WHERE run_id = ?",
            (run_id,),
        )
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in the journal", run_id=run_id)
        run, recipe, definition, project, profile, fingerprint, total, options = row[:8]
        status, pid, host = row[8:]
        return RunRecord(
            run,
            recipe,
            definition,
            project,
            profile,
            fingerprint,
            total,
            json.loads(options),
            status,
            pid,
            host,
        )

    def iteration_states(self, run_id: str) -> dict[int, tuple[IterationState, str]]:
        """Each started iteration's state and parameter fingerprint, by number."""
        with sqlite_errors("read the iterations"):
            rows = self._db.conn.execute(
                "SELECT number, state, params_fingerprint FROM iterations WHERE run_id = ?",
                (run_id,),
            ).fetchall()
        return {number: (IterationState(state), fp) for number, state, fp in rows}

    def skipped_iterations(self, run_id: str) -> set[int]:
        """Failed iterations a person skipped (``resume --skip``): a resume leaves them."""
        with sqlite_errors("read the iterations"):
            rows = self._db.conn.execute(
                "SELECT number FROM iterations WHERE run_id = ? AND state = 'failed' "
                "AND reason_code = ?",
                (run_id, SKIPPED),
            ).fetchall()
        return {number for (number,) in rows}

    def iteration_state(self, run_id: str, number: int) -> IterationState | None:
        """One iteration's state (``None`` if it never started): a keyed read per iteration."""
        row = self._db.one(
            "SELECT state FROM iterations WHERE run_id = ? AND number = ?", (run_id, number)
        )
        return None if row is None else IterationState(row[0])

    def open_submissions(self, run_id: str, iteration: int) -> list[SubmissionRecord]:
        """Submissions of an iteration whose outcome is not settled (in flight or unknown)."""
        return [s for s in self.iteration_submissions(run_id, iteration) if s.state in _OPEN]

    def _refuse_restart(self, run_id: str, number: int) -> None:
        """A settled iteration keeps its verdict: starting it again would hide it.

        A failed or stopped iteration may be started again by ``resume``; its submissions
        keep their keys, so nothing verified or unknown is sent twice.
        """
        with sqlite_errors("read the iteration"):
            row = self._db.conn.execute(
                "SELECT state FROM iterations WHERE run_id = ? AND number = ?", (run_id, number)
            ).fetchone()
        if row is not None and IterationState(row[0]) in _SETTLED:
            raise JournalError(
                f"iteration {number} of run {run_id} already ended as {row[0]}",
                run_id=run_id,
                iteration=number,
                fix="Start the next iteration, or reconcile this one first.",
            )


_OPEN = frozenset({SubmissionState.IN_FLIGHT, SubmissionState.DISPATCHED, SubmissionState.UNKNOWN})
_SETTLED = frozenset({IterationState.VERIFIED, IterationState.UNKNOWN, IterationState.NEEDS_REVIEW})


def _run_status(status: RunStatus | str) -> RunStatus:
    try:
        return RunStatus(status)
    except ValueError:
        allowed = ", ".join(s.value for s in RunStatus)
        raise JournalError(
            f"{status!r} is not a run status", fix=f"Use one of: {allowed}."
        ) from None


def _require(rowcount: int, run_id: str) -> None:
    if rowcount == 0:
        raise RunNotFound(f"no run {run_id!r} in the journal", run_id=run_id)


def _require_iteration(rowcount: int, run_id: str, number: int) -> None:
    if rowcount == 0:
        raise JournalError(
            f"iteration {number} of run {run_id} was never started",
            run_id=run_id,
            iteration=number,
            fix="Call start_iteration before recording the iteration's result.",
        )


def _require_final(state: IterationState, run_id: str, number: int) -> None:
    if not state.is_final:
        raise JournalError(
            f"iteration {number} of run {run_id} cannot finish in state {state.value!r}",
            run_id=run_id,
            iteration=number,
            fix="Finish an iteration with a final state (verified, failed, ...).",
        )
