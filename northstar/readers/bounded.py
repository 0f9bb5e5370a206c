"""Reading a long run without loading every iteration: ``show``, ``watch`` and ``report``.

``get_run`` folds every iteration, step and event of a run into memory; on a run of
100,000 iterations that is millions of rows before the first line is printed. The
readers here fetch a bounded number of rows whatever the run's length:

- ``read_window``: the run's summary, every iteration that is not verified (up to
  ``cap``), the last ``tail`` iterations, the steps and outputs of those alone, and the
  last ``events`` events. Verified iterations outside the window are only counted
  (``RunDetail.omitted_iterations``).
- ``iteration_pages``: every iteration, in pages of ``size`` by number (keyset paging on
  the primary key), for ``show --all``: memory holds one page at a time.

Each query is a range of a primary key or an index (``iterations (run_id, number)``,
``step_events (run_id, iteration, step_id)``, ``events (run_id, id)``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from northstar.errors import RunNotFound
from northstar.readers import queries
from northstar.readers.liveness import Liveness, pid_alive
from northstar.readers.views import IterationView, RunDetail, RunEvent, StepView

__all__ = ["iteration_pages", "read_window", "window_reader"]

# ``watch`` reads at most this many iterations past the last one it saw settle, per poll.
_WATCH_BATCH = 500

_IN_PROGRESS = frozenset({"pending", "running"})
_ITERATION_COLUMNS = (
    "number, state, lane, params_fingerprint, started_at, ended_at, duration_ms, "
    "reason_code, reason, failing_step, evidence_count, model_calls, row_json"
)


def read_window(
    path: str | os.PathLike[str],
    run_id: str,
    *,
    tail: int = 20,
    cap: int = 100,
    events: int = 200,
    since: int | None = None,
    is_alive: Liveness = pid_alive,
) -> RunDetail:
    """The run with its problem iterations (first ``cap``) and its last ``tail`` iterations.

    With ``since`` (``watch``), the iterations numbered from ``since`` on replace the
    last ``tail``: up to ``_WATCH_BATCH`` of them, the ones that may have changed.
    """
    with queries._open_readonly(path) as conn:
        row = _run_row(conn, path, run_id)
        summary = queries._summary(row, is_alive)
        rows = _window_rows(conn, run_id, tail, cap, since)
        found = _fold(conn, run_id, rows, summary.effective_status)
        kept, omitted_events = _last_events(conn, run_id, events)
        options = json.loads(row[15])
        controls = queries.probe_controls(conn, row[16], options.get("base_url"))
    omitted = max(0, summary.iterations_recorded - len(found))
    return RunDetail(
        summary, row[16], row[17], options, found, kept, omitted, omitted_events, controls
    )


def iteration_pages(
    path: str | os.PathLike[str],
    run_id: str,
    *,
    size: int = 1000,
    run_status: str = "running",
) -> Iterator[tuple[IterationView, ...]]:
    """Every iteration of the run by number, ``size`` at a time, each page its own read."""
    after = 0
    while True:
        with queries._open_readonly(path) as conn:
            rows = conn.execute(
                f"SELECT {_ITERATION_COLUMNS} FROM iterations WHERE run_id = ? AND number > ? "
                "ORDER BY number LIMIT ?",
                (run_id, after, size),
            ).fetchall()
            page = _fold(conn, run_id, rows, run_status)
        if not page:
            return
        yield page
        after = page[-1].number


def _run_row(conn: Any, path: str | os.PathLike[str], run_id: str) -> Sequence[Any]:
    row: Sequence[Any] | None = conn.execute(
        f"SELECT {queries._RUN_COLUMNS}, r.definition_hash, r.params_fingerprint "
        "FROM runs r WHERE r.run_id = ?",
        (run_id,),
    ).fetchone()
    if row is None:
        where = queries.shown_journal(path)
        raise RunNotFound(f"no run {run_id!r} in the journal at {where}", run_id=run_id)
    return row


def window_reader(tail: int = 20) -> Callable[..., RunDetail]:
    """A ``read`` for ``follow_run`` that re-reads only iterations that may have changed.

    After each read it remembers the lowest iteration still in progress (or the one after
    the highest seen): the next read starts there, so settled iterations are not read again.
    """
    since: int | None = None

    def read(path: str | os.PathLike[str], run_id: str, *, is_alive: Liveness) -> RunDetail:
        nonlocal since
        detail = read_window(path, run_id, tail=tail, since=since, is_alive=is_alive)
        since = _next_since(detail, since)
        return detail

    return read


def _next_since(detail: RunDetail, since: int | None) -> int | None:
    """Where the next poll starts: the first iteration not yet final, else after the last."""
    running = [it.number for it in detail.iterations if it.state in _IN_PROGRESS]
    if running:
        return min(running)
    if detail.iterations:
        return max(detail.iterations[-1].number + 1, since or 1)
    return since


def _window_rows(
    conn: Any, run_id: str, tail: int, cap: int, since: int | None = None
) -> list[Sequence[Any]]:
    """Problem iterations (not verified) and the last ``tail``, each once, by number."""
    problems = conn.execute(
        f"SELECT {_ITERATION_COLUMNS} FROM iterations WHERE run_id = ? "
        "AND state <> 'verified' ORDER BY number LIMIT ?",
        (run_id, cap),
    ).fetchall()
    if since is None:
        last = conn.execute(
            f"SELECT {_ITERATION_COLUMNS} FROM iterations WHERE run_id = ? "
            "ORDER BY number DESC LIMIT ?",
            (run_id, tail),
        ).fetchall()
    else:
        last = conn.execute(
            f"SELECT {_ITERATION_COLUMNS} FROM iterations WHERE run_id = ? AND number >= ? "
            "ORDER BY number LIMIT ?",
            (run_id, since, _WATCH_BATCH),
        ).fetchall()
    by_number = {row[0]: row for row in [*problems, *last]}
    return [by_number[number] for number in sorted(by_number)]


def _fold(
    conn: Any, run_id: str, rows: Sequence[Sequence[Any]], run_status: str
) -> tuple[IterationView, ...]:
    numbers = [row[0] for row in rows]
    steps = _steps_of(conn, run_id, numbers)
    outputs = _outputs_of(conn, run_id, numbers)
    return tuple(queries._iteration(row, run_status, steps, outputs) for row in rows)


def _in_numbers(numbers: Sequence[int]) -> str:
    return ", ".join("?" for _ in numbers)


def _steps_of(conn: Any, run_id: str, numbers: Sequence[int]) -> dict[int, list[StepView]]:
    if not numbers:
        return {}
    marks = _in_numbers(numbers)
    events: dict[tuple[int, str], list[tuple[Any, ...]]] = {}
    for row in conn.execute(
        "SELECT iteration, step_id, event, at, duration_ms, evidence_json, error_json, attempts "
        f"FROM step_events WHERE run_id = ? AND iteration IN ({marks}) ORDER BY id",
        (run_id, *numbers),
    ):
        events.setdefault((row[0], row[1]), []).append(row[2:])
    steps: dict[int, list[StepView]] = {}
    for number, step_id, tab, kind, seq, retry_json in conn.execute(
        "SELECT iteration, step_id, tab, kind, seq, retry_json FROM steps WHERE run_id = ? "
        f"AND iteration IN ({marks}) ORDER BY iteration, seq, step_id",
        (run_id, *numbers),
    ):
        view = queries._fold_step(step_id, tab, kind, seq, events.get((number, step_id), []))
        view = replace(view, retry=json.loads(retry_json) if retry_json else None)
        steps.setdefault(number, []).append(view)
    return steps


def _outputs_of(conn: Any, run_id: str, numbers: Sequence[int]) -> dict[int, dict[str, str]]:
    outputs: dict[int, dict[str, str]] = {}
    if not numbers:
        return outputs
    for number, name, value in conn.execute(
        f"SELECT iteration, name, value FROM outputs WHERE run_id = ? "
        f"AND iteration IN ({_in_numbers(numbers)}) ORDER BY iteration, name",
        (run_id, *numbers),
    ):
        outputs.setdefault(number, {})[name] = value
    return outputs


def _last_events(conn: Any, run_id: str, limit: int) -> tuple[tuple[RunEvent, ...], int]:
    """The last ``limit`` events, oldest first, and how many came before them."""
    rows = conn.execute(
        "SELECT at, name, payload_json FROM events WHERE run_id = ? ORDER BY id DESC LIMIT ?",
        (run_id, limit + 1),
    ).fetchall()
    kept = rows[:limit]
    before = 0
    if len(rows) > limit:
        count = conn.execute("SELECT count(*) FROM events WHERE run_id = ?", (run_id,)).fetchone()
        before = int(count[0]) - limit
    return tuple(RunEvent(at, name, json.loads(p)) for at, name, p in reversed(kept)), before
