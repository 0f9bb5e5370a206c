"""Read-only views of the journal, for ``northstar runs``, ``show`` and ``watch``.

Readers and starters are separate (DESIGN §2): this module opens the journal with
``mode=ro`` and ``query_only``, and imports nothing that can start a run, write to the
journal or dispatch a step (not the runner, not ``northstar.journal``, no browser code).
It knows the journal's tables by their SQL alone; ``READ_SCHEMA_VERSION`` says which
schema it understands, and a test keeps it equal to the writer's ``SCHEMA_VERSION``.

A run or iteration the journal still calls ``running`` whose worker process is gone is
shown as ``interrupted``: a worker that exited without recording a result did not verify
anything. Liveness is checked with ``os.kill(pid, 0)`` for workers on this host only;
elsewhere the recorded state is shown as it is. A pid reused by an unrelated process reads
as alive: the mistake errs towards "still running", never towards "verified".
"""

from __future__ import annotations

import inspect
import json
import os
import socket
import sqlite3
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from northstar.errors import JournalError, RunNotFound, UsageInvalid
from northstar.recipe import RetryPolicy

__all__ = [
    "INTERRUPTED",
    "READ_SCHEMA_VERSION",
    "IterationView",
    "RunDetail",
    "RunEvent",
    "RunSummary",
    "StepView",
    "follow_run",
    "get_run",
    "list_runs",
    "pid_alive",
    "render_run",
    "render_runs",
]

READ_SCHEMA_VERSION = 2
INTERRUPTED = "interrupted"
_APPLICATION_ID = 0x4E535452  # "NSTR", set by the writer's first migration
_BUSY_TIMEOUT_S = 10.0
_UNFINISHED_STEP = frozenset({"started", "in_flight", "dispatched"})
_STEP_STATUS = {"started": "running"}  # other events name the status they lead to

Liveness = Callable[[int], bool]
# Shown next to a step only when it differs or was needed: the default is in the README.
_DEFAULT_RETRY = RetryPolicy().model_dump()


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One line of ``northstar runs``; ``effective_status`` may be ``interrupted``."""

    run_id: str
    recipe_name: str
    recipe_path: str
    project: str
    profile: str
    status: str
    effective_status: str
    total_iterations: int
    iterations_recorded: int
    iterations_verified: int
    started_at: str
    ended_at: str | None
    heartbeat_at: str | None
    worker_pid: int | None
    worker_host: str | None

    @property
    def is_final(self) -> bool:
        """Nothing more will happen to the run without someone starting it again."""
        return self.effective_status != "running"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class StepView:
    """A step of one iteration: its last transition, timings, evidence and error."""

    step_id: str
    tab: str
    kind: str
    seq: int
    status: str
    effective_status: str
    started_at: str | None
    ended_at: str | None
    duration_ms: float | None
    evidence: tuple[dict[str, Any], ...]
    error: dict[str, Any] | None
    events: tuple[tuple[str, str], ...]  # (event, at), oldest first
    attempts: int | None = None
    retry: dict[str, Any] | None = None  # the policy the step ran under


@dataclass(frozen=True, slots=True)
class IterationView:
    number: int
    state: str
    effective_state: str
    lane: int | None
    params_fingerprint: str
    started_at: str | None
    ended_at: str | None
    duration_ms: float | None
    reason_code: str | None
    reason: str | None
    failing_step: str | None
    evidence_count: int
    model_calls: int | None
    steps: tuple[StepView, ...]
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunEvent:
    at: str
    name: str
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RunDetail:
    """Everything the journal holds about one run, for ``northstar show`` and ``watch``."""

    summary: RunSummary
    definition_hash: str
    params_fingerprint: str
    options: dict[str, Any]
    iterations: tuple[IterationView, ...]
    events: tuple[RunEvent, ...]

    @property
    def run_id(self) -> str:
        return self.summary.run_id

    @property
    def effective_status(self) -> str:
        return self.summary.effective_status

    @property
    def is_final(self) -> bool:
        return self.summary.is_final

    def to_dict(self) -> dict[str, Any]:
        out = self.summary.to_dict()
        out.update(
            definition_hash=self.definition_hash,
            params_fingerprint=self.params_fingerprint,
            options=self.options,
            iterations=[asdict(i) for i in self.iterations],
            events=[asdict(e) for e in self.events],
        )
        return out


# Liveness: plain decisions over plain data, with the probe injected.


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists on this host (signal 0 probes, sends nothing)."""
    if pid <= 0:
        return False  # 0 and negatives address process groups, never one worker
    if os.name == "nt":
        return True  # os.kill would terminate it on Windows; we cannot tell, so assume alive
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True


def _worker_gone(pid: int | None, host: str | None, is_alive: Liveness) -> bool:
    if pid is None or host != socket.gethostname():
        return False  # a worker elsewhere cannot be probed; trust the record
    return not is_alive(pid)


def _effective_run_status(status: str, worker_gone: bool) -> str:
    return INTERRUPTED if status == "running" and worker_gone else status


def _effective_iteration_state(state: str, run_status: str) -> str:
    """An iteration left running by a run that is no longer running was interrupted."""
    if state in ("pending", "running") and run_status != "running":
        return INTERRUPTED
    return state


# Opening the journal read-only.


@contextmanager
def _open_readonly(path: str | os.PathLike[str]) -> Iterator[sqlite3.Connection]:
    """A read-only connection inside one read transaction (a consistent snapshot)."""
    file = Path(path).expanduser()
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
def _sqlite_errors(file: Path) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise JournalError(f"cannot read the journal at {file}: {exc}", path=str(file)) from exc


def _check_schema(conn: sqlite3.Connection, file: Path) -> None:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    if version == 0 or app_id != _APPLICATION_ID:
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
    "r.started_at, r.ended_at, r.heartbeat_at, r.worker_pid, r.worker_host"
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
            f"SELECT {_RUN_COLUMNS}, r.definition_hash, r.params_fingerprint, r.options_json "
            "FROM runs r WHERE r.run_id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in the journal at {path}", run_id=run_id)
        summary = _summary(row[:14], is_alive)
        iterations = _iterations(conn, run_id, summary.effective_status)
        events = _events(conn, run_id)
    return RunDetail(summary, row[14], row[15], json.loads(row[16]), iterations, events)


def _summary(row: Sequence[Any], is_alive: Liveness) -> RunSummary:
    gone = _worker_gone(row[12], row[13], is_alive)
    return RunSummary(
        run_id=row[0],
        recipe_name=row[1],
        recipe_path=row[2],
        project=row[3],
        profile=row[4],
        status=row[5],
        effective_status=_effective_run_status(row[5], gone),
        total_iterations=row[6],
        iterations_recorded=row[7],
        iterations_verified=row[8],
        started_at=row[9],
        ended_at=row[10],
        heartbeat_at=row[11],
        worker_pid=row[12],
        worker_host=row[13],
    )


def _iterations(
    conn: sqlite3.Connection, run_id: str, run_status: str
) -> tuple[IterationView, ...]:
    steps = _steps(conn, run_id)
    outputs: dict[int, dict[str, str]] = {}
    for number, name, value in conn.execute(
        "SELECT iteration, name, value FROM outputs WHERE run_id = ? ORDER BY iteration, name",
        (run_id,),
    ):
        outputs.setdefault(number, {})[name] = value
    rows = conn.execute(
        "SELECT number, state, lane, params_fingerprint, started_at, ended_at, duration_ms, "
        "reason_code, reason, failing_step, evidence_count, model_calls "
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
    effective = _effective_iteration_state(state, run_status)
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
    )


def _steps(conn: sqlite3.Connection, run_id: str) -> dict[int, list[StepView]]:
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


def _events(conn: sqlite3.Connection, run_id: str) -> tuple[RunEvent, ...]:
    rows = conn.execute(
        "SELECT at, name, payload_json FROM events WHERE run_id = ? ORDER BY id", (run_id,)
    ).fetchall()
    return tuple(RunEvent(at, name, json.loads(payload)) for at, name, payload in rows)


# Following a run.


async def follow_run(
    path: str | os.PathLike[str],
    run_id: str,
    *,
    poll: Callable[[], Awaitable[None] | None],
    on_change: Callable[[RunDetail], None],
    is_alive: Liveness = pid_alive,
) -> RunDetail:
    """Report every change of the run to ``on_change`` until its status is final.

    ``poll`` is the wait between reads (the CLI passes a 0.5 s sleep; tests pass a
    function that advances a writer), so this loop itself never sleeps.
    """
    last: RunDetail | None = None
    while True:
        detail = get_run(path, run_id, is_alive=is_alive)
        if detail != last:
            on_change(detail)
            last = detail
        if detail.is_final:
            return detail
        waited = poll()
        if inspect.isawaitable(waited):
            await waited


# Rendering: compact human text, one line per step.


def render_runs(runs: Sequence[RunSummary]) -> str:
    """The table for ``northstar runs``."""
    if not runs:
        return "no runs in the journal"
    lines = [f"{'RUN':<15} {'STATUS':<13} {'VERIFIED':<9} {'STARTED':<19}  RECIPE"]
    for run in runs:
        done = f"{run.iterations_verified}/{run.total_iterations}"
        lines.append(
            f"{run.run_id:<15} {run.effective_status:<13} {done:<9} "
            f"{_short_time(run.started_at):<19}  {run.recipe_name}"
        )
    return "\n".join(lines)


def render_run(detail: RunDetail) -> str:
    """The text for ``northstar show`` (and each refresh of ``watch``)."""
    lines = _run_header(detail)
    for iteration in detail.iterations:
        lines.append(_iteration_line(iteration))
        lines.extend(_step_line(step) for step in iteration.steps)
        if iteration.outputs:
            pairs = ", ".join(f"{k}={_clip(v, 60)}" for k, v in iteration.outputs.items())
            lines.append(f"    outputs: {pairs}")
    return "\n".join(lines)


def _run_header(detail: RunDetail) -> list[str]:
    run = detail.summary
    status = run.effective_status
    if status == INTERRUPTED:
        status += f" (worker {run.worker_pid} exited without recording an end)"
    ended = f"  ended {_short_time(run.ended_at)}" if run.ended_at else ""
    return [
        f"run {run.run_id}  {run.recipe_name}  {status}  "
        f"{run.iterations_verified}/{run.total_iterations} verified",
        f"  recipe {run.recipe_path}  project {run.project}  profile {run.profile}  "
        f"definition {detail.definition_hash[:12]}",
        f"  started {_short_time(run.started_at)}{ended}",
    ]


def _iteration_line(iteration: IterationView) -> str:
    calls = "-" if iteration.model_calls is None else str(iteration.model_calls)
    line = (
        f"  iteration {iteration.number}  {iteration.effective_state}  "
        f"{_ms(iteration.duration_ms)}  evidence {iteration.evidence_count}  model calls {calls}"
    )
    if iteration.reason_code:
        where = f" at step {iteration.failing_step!r}" if iteration.failing_step else ""
        line += f"\n    {iteration.reason_code}{where}: {iteration.reason or ''}"
    return line


def _step_line(step: StepView) -> str:
    line = (
        f"    {step.seq + 1:>2} {step.step_id:<20} {step.tab:<10} {step.kind:<12} "
        f"{step.effective_status:<11} {_ms(step.duration_ms):>9}  {len(step.evidence)} evidence"
    )
    if step.attempts and step.attempts > 1:
        line += f"  {step.attempts} attempts"
    if step.retry and (step.retry != _DEFAULT_RETRY or (step.attempts or 1) > 1):
        retry = step.retry
        line += (
            f"  [retry: {retry.get('attempts')} attempts in {retry.get('max_seconds'):g} s"
            f" on {','.join(retry.get('on', []))}]"
        )
    if step.error:
        line += f"  {step.error.get('code', '?')}: {_clip(str(step.error.get('message', '')), 80)}"
    return line


def _short_time(stamp: str | None) -> str:
    if not stamp:
        return "-"
    try:
        return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return stamp


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
