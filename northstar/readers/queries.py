"""The read-only queries behind ``northstar runs``, ``show`` and ``watch``.

This module opens the journal with ``mode=ro`` and ``query_only`` (a Postgres journal: a
``READ ONLY`` session), inside one read transaction, and folds its rows into the views. It
knows the journal's tables by their SQL alone; ``READ_SCHEMA_VERSION`` says which schema it
understands, and a test keeps it equal to the writer's ``SCHEMA_VERSION``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

from northstar.errors import JournalError, RunNotFound, UsageInvalid
from northstar.journal.paths import is_postgres_url, redact_url, refuse_not_regular
from northstar.journal.postgres import (
    META_TABLE,
    PgConnection,
    connect_postgres,
    pg_error_boundary,
)
from northstar.readers.liveness import (
    INTERRUPTED,
    Liveness,
    effective_state,
    effective_status,
    pid_alive,
    queue_of,
    worker_gone,
)
from northstar.readers.views import (
    IterationView,
    ProbeControlView,
    RunDetail,
    RunEvent,
    RunSummary,
    StepView,
)

__all__ = [
    "READ_SCHEMA_VERSION",
    "get_run",
    "iteration_rows",
    "list_runs",
    "probe_controls",
    "shown_journal",
]

READ_SCHEMA_VERSION = 6
_APPLICATION_ID = 0x4E535452  # "NSTR", set by the writer's first migration
_BUSY_TIMEOUT_S = 10.0
_UNFINISHED_STEP = frozenset({"started", "in_flight", "dispatched"})
_STEP_STATUS = {"started": "running"}  # other events name the status they lead to


# Opening the journal read-only.


def shown_journal(path: str | os.PathLike[str]) -> str:
    """The journal as a message may show it: a URL loses its password."""
    return redact_url(str(path)) if is_postgres_url(path) else str(path)


@contextmanager
def _open_readonly(path: str | os.PathLike[str]) -> Iterator[Any]:
    """A read-only connection inside one read transaction (a consistent snapshot)."""
    if is_postgres_url(path):
        with _open_postgres(str(path)) as pg:
            yield pg
        return
    file = Path(path).expanduser()
    refuse_not_regular(file)
    if not file.is_file():
        raise JournalError(
            f"no journal at {file}",
            path=str(file),
            fix="Run a recipe first, or pass --journal PATH / set NORTHSTAR_JOURNAL.",
        )
    uri = f"file:{quote(str(file.resolve()))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=_BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise JournalError(f"cannot read the journal at {file}: {exc}", path=str(file)) from exc
    try:
        with _sqlite_errors(file):
            conn.execute("PRAGMA query_only = ON")
            _check_schema(conn, file)
            conn.execute("BEGIN")
            yield conn
    finally:
        conn.close()


@contextmanager
def _open_postgres(url: str) -> Iterator[PgConnection]:
    """A read-only session in one ``REPEATABLE READ`` transaction: one snapshot, like SQLite's."""
    conn = connect_postgres(url, read_only=True)
    try:
        with pg_error_boundary("read the journal", conn.url):
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            _check_version(_pg_version(conn), True, conn.url)
            yield conn
    finally:
        conn.close()


def _pg_version(conn: PgConnection) -> int:
    found: Any = conn.execute("SELECT to_regclass(?)", (META_TABLE,)).fetchone()
    if found[0] is None:
        return 0
    row = conn.execute(f"SELECT version, application_id FROM {META_TABLE}").fetchone()
    return 0 if row is None or int(row[1]) != _APPLICATION_ID else int(row[0])


@contextmanager
def _sqlite_errors(file: Path) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise JournalError(f"cannot read the journal at {file}: {exc}", path=str(file)) from exc


def _check_schema(conn: sqlite3.Connection, file: Path) -> None:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    _check_version(version, app_id == _APPLICATION_ID, str(file))


def _check_version(version: int, ours: bool, file: str) -> None:
    if version == 0 or not ours:
        raise JournalError(
            f"{file} is not a Northstar journal (or is still empty)",
            path=str(file),
            fix="Point --journal / NORTHSTAR_JOURNAL at the journal a run wrote.",
        )
    if version != READ_SCHEMA_VERSION:
        raise JournalError(
            f"the journal at {file} has schema version {version}; "
            f"this reader understands version {READ_SCHEMA_VERSION}",
            path=str(file),
            fix="Use the Northstar version that wrote the journal (a run migrates older ones).",
        )


# Queries.

_RUN_COLUMNS = (
    "r.run_id, r.recipe_name, r.recipe_path, r.project, r.profile, r.status, "
    "r.total_iterations, "
    "(SELECT count(*) FROM iterations i WHERE i.run_id = r.run_id), "
    "(SELECT count(*) FROM iterations i WHERE i.run_id = r.run_id AND i.state = 'verified'), "
    "r.started_at, r.ended_at, r.heartbeat_at, r.worker_pid, r.worker_host, "
    # A queued run's last run_queued event names its queue; a local resume's comes later.
    "(SELECT e.payload_json FROM events e WHERE e.run_id = r.run_id "
    "AND e.name IN ('run_queued', 'run_resumed') ORDER BY e.id DESC LIMIT 1), "
    "r.options_json"
)


def list_runs(
    path: str | os.PathLike[str], limit: int = 20, *, is_alive: Liveness = pid_alive
) -> list[RunSummary]:
    """The most recent runs first."""
    if limit < 1:
        raise UsageInvalid(f"--limit must be at least 1, not {limit}")
    with _open_readonly(path) as conn:
        rows = conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs r ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?",
            (limit,),
        ).fetchall()
    return [_summary(row, is_alive) for row in rows]


def get_run(
    path: str | os.PathLike[str], run_id: str, *, is_alive: Liveness = pid_alive
) -> RunDetail:
    """Everything about ``run_id``; ``RunNotFound`` if the journal has no such run."""
    with _open_readonly(path) as conn:
        row = conn.execute(
            f"SELECT {_RUN_COLUMNS}, r.definition_hash, r.params_fingerprint "
            "FROM runs r WHERE r.run_id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise RunNotFound(
                f"no run {run_id!r} in the journal at {shown_journal(path)}", run_id=run_id
            )
        summary = _summary(row, is_alive)
        iterations = _iterations(conn, run_id, summary.effective_status)
        events = _events(conn, run_id)
        options = json.loads(row[15])
        controls = probe_controls(conn, row[16], options.get("base_url"))
    return RunDetail(
        summary, row[16], row[17], options, iterations, events, probe_controls=controls
    )


def probe_controls(
    conn: Any, definition_hash: str, base_url: str | None
) -> tuple[ProbeControlView, ...]:
    """The latest positive control of each probe of a recipe definition on a base URL."""
    rows = conn.execute(
        "SELECT step_id, proven, checked_at, detail FROM probe_controls "
        "WHERE definition_hash = ? AND base_url = ? ORDER BY step_id",
        (definition_hash, base_url or ""),
    ).fetchall()
    return tuple(ProbeControlView(str(s), bool(p), str(at), str(d)) for s, p, at, d in rows)


def iteration_rows(path: str | os.PathLike[str], run_id: str) -> dict[int, dict[str, str]]:
    """Each recorded iteration's values (secrets redacted), by number; none kept: left out."""
    with _open_readonly(path) as conn:
        found = conn.execute(
            "SELECT number, row_json FROM iterations WHERE run_id = ? AND row_json IS NOT NULL",
            (run_id,),
        ).fetchall()
    return {number: values for number, text in found if (values := _row(text)) is not None}


def _summary(row: Sequence[Any], is_alive: Liveness) -> RunSummary:
    """A run's line from the columns of ``_RUN_COLUMNS`` at the start of ``row``."""
    queue = queue_of(json.loads(row[14] or "{}"))
    gone = worker_gone(row[12], row[13], is_alive, queue=queue)
    return RunSummary(
        run_id=row[0],
        recipe_name=row[1],
        recipe_path=row[2],
        project=row[3],
        profile=row[4],
        status=row[5],
        effective_status=effective_status(row[5], gone),
        total_iterations=row[6],
        iterations_recorded=row[7],
        iterations_verified=row[8],
        started_at=row[9],
        ended_at=row[10],
        heartbeat_at=row[11],
        worker_pid=row[12],
        worker_host=row[13],
        queue=queue,
    )


def _iterations(conn: Any, run_id: str, run_status: str) -> tuple[IterationView, ...]:
    steps = _steps(conn, run_id)
    outputs: dict[int, dict[str, str]] = {}
    for number, name, value in conn.execute(
        "SELECT iteration, name, value FROM outputs WHERE run_id = ? ORDER BY iteration, name",
        (run_id,),
    ):
        outputs.setdefault(number, {})[name] = value
    rows = conn.execute(
        "SELECT number, state, lane, params_fingerprint, started_at, ended_at, duration_ms, "
        "reason_code, reason, failing_step, evidence_count, model_calls, row_json "
        "FROM iterations WHERE run_id = ? ORDER BY number",
        (run_id,),
    ).fetchall()
    return tuple(_iteration(row, run_status, steps, outputs) for row in rows)


def _iteration(
    row: Sequence[Any],
    run_status: str,
    steps: dict[int, list[StepView]],
    outputs: dict[int, dict[str, str]],
) -> IterationView:
    number, state = row[0], row[1]
    effective = effective_state(state, run_status)
    return IterationView(
        number=number,
        state=state,
        effective_state=effective,
        lane=row[2],
        params_fingerprint=row[3],
        started_at=row[4],
        ended_at=row[5],
        duration_ms=row[6],
        reason_code=row[7],
        reason=row[8],
        failing_step=row[9],
        evidence_count=row[10],
        model_calls=row[11],
        steps=tuple(_settle(step, effective) for step in steps.get(number, ())),
        outputs=outputs.get(number, {}),
        row=_row(row[12]),
    )


def _row(row_json: str | None) -> dict[str, str] | None:
    """The values an iteration ran with (secrets already redacted), or ``None`` if not kept."""
    if not row_json:
        return None
    values = json.loads(row_json)
    return {str(k): str(v) for k, v in values.items()} if isinstance(values, dict) else None


def _steps(conn: Any, run_id: str) -> dict[int, list[StepView]]:
    """Each iteration's steps in order, folded from their transitions."""
    events: dict[tuple[int, str], list[tuple[Any, ...]]] = {}
    for row in conn.execute(
        "SELECT iteration, step_id, event, at, duration_ms, evidence_json, error_json, attempts "
        "FROM step_events WHERE run_id = ? ORDER BY id",
        (run_id,),
    ):
        events.setdefault((row[0], row[1]), []).append(row[2:])
    steps: dict[int, list[StepView]] = {}
    for number, step_id, tab, kind, seq, retry_json in conn.execute(
        "SELECT iteration, step_id, tab, kind, seq, retry_json FROM steps WHERE run_id = ? "
        "ORDER BY iteration, seq, step_id",
        (run_id,),
    ):
        view = _fold_step(step_id, tab, kind, seq, events.get((number, step_id), []))
        view = replace(view, retry=json.loads(retry_json) if retry_json else None)
        steps.setdefault(number, []).append(view)
    return steps


def _fold_step(
    step_id: str, tab: str, kind: str, seq: int, events: list[tuple[Any, ...]]
) -> StepView:
    last = events[-1] if events else ("started", None, None, None, None, None)
    event, at, duration_ms, evidence_json, error_json, attempts = last
    status = _STEP_STATUS.get(event, event)
    final = event not in _UNFINISHED_STEP
    return StepView(
        step_id=step_id,
        tab=tab,
        kind=kind,
        seq=seq,
        status=status,
        effective_status=status,
        started_at=events[0][1] if events else None,
        ended_at=at if final else None,
        duration_ms=duration_ms,
        evidence=tuple(json.loads(evidence_json or "[]")),
        error=json.loads(error_json) if error_json else None,
        events=tuple((e[0], e[1]) for e in events),
        attempts=attempts,
    )


def _settle(step: StepView, iteration_state: str) -> StepView:
    """A step left unfinished by an interrupted iteration is itself interrupted."""
    if iteration_state == INTERRUPTED and step.ended_at is None:
        return replace(step, effective_status=INTERRUPTED)
    return step


def _events(conn: Any, run_id: str) -> tuple[RunEvent, ...]:
    rows = conn.execute(
        "SELECT at, name, payload_json FROM events WHERE run_id = ? ORDER BY id", (run_id,)
    ).fetchall()
    return tuple(RunEvent(at, name, json.loads(payload)) for at, name, payload in rows)
