"""``show``, ``watch`` and ``report`` on a long run read a bounded number of rows.

The journal is filled through the writer's connection with bulk inserts (20,000 iterations
of three steps each, in one transaction), and every connection the readers open is wrapped
to count the rows they fetch: the bound is asserted on rows, never on time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from northstar.cli import cli
from northstar.journal import Journal
from northstar.readers import queries
from northstar.readers.bounded import iteration_pages, read_window, window_reader
from northstar.readers.changes import change_lines

ITERATIONS = 20_000
FAILED = {7: "failed", 12_345: "unknown"}
STEPS = ("open", "fill", "send")


def _fill(journal: Journal, run_id: str, numbers: range, state: str = "verified") -> None:
    conn = journal._db.conn
    stamp = "2026-01-01T00:00:00+00:00"
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO iterations (run_id, number, state, params_fingerprint, started_at, "
        "ended_at, duration_ms, reason_code) VALUES (?, ?, ?, 'fp', ?, ?, 5.0, ?)",
        [
            (
                run_id,
                n,
                FAILED.get(n, state),
                stamp,
                stamp,
                "EXPECTATION_FAILED" if n in FAILED else None,
            )
            for n in numbers
        ],
    )
    steps = [(run_id, n, s, i) for n in numbers for i, s in enumerate(STEPS)]
    conn.executemany(
        "INSERT INTO steps (run_id, iteration, step_id, tab, kind, seq) "
        "VALUES (?, ?, ?, 'a', 'goto', ?)",
        steps,
    )
    conn.executemany(
        "INSERT INTO step_events (run_id, iteration, step_id, event, at) "
        "VALUES (?, ?, ?, 'passed', ?)",
        [(run_id, n, s, stamp) for run_id, n, s, _ in steps],
    )
    conn.executemany(
        "INSERT INTO outputs (run_id, iteration, name, value) VALUES (?, ?, 'url', 'u')",
        [(run_id, n) for n in numbers],
    )
    conn.execute("COMMIT")


def create_long_run(journal: Journal, total: int) -> str:
    """A run of ``total`` iterations with no iteration recorded yet (``_fill`` adds them)."""
    run_id, _ = journal.create_run(
        recipe_path="r.yaml",
        recipe_name="long",
        definition_hash="0" * 64,
        project="p",
        profile="default",
        params_fingerprint="fp",
        total_iterations=total,
        options={},
    )
    return run_id


@pytest.fixture(scope="module")
def long_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("long") / "journal.db"
    with Journal.open(path) as journal:
        run_id = create_long_run(journal, ITERATIONS + 10)
        _fill(journal, run_id, range(1, ITERATIONS + 1))
        journal.finish_run(run_id, "failed")
    return path, run_id


class _Counter:
    def __init__(self) -> None:
        self.rows = 0
        self.reads: list[int] = []


class _CountingCursor:
    def __init__(self, cursor: Any, counter: _Counter) -> None:
        self._cursor, self._counter = cursor, counter

    def fetchall(self) -> list[Any]:
        rows = self._cursor.fetchall()
        self._counter.rows += len(rows)
        return list(rows)

    def fetchone(self) -> Any:
        row = self._cursor.fetchone()
        self._counter.rows += row is not None
        return row

    def __iter__(self) -> Iterator[Any]:
        for row in self._cursor:
            self._counter.rows += 1
            yield row


class _CountingConnection:
    def __init__(self, conn: Any, counter: _Counter) -> None:
        self._conn, self._counter = conn, counter

    def execute(self, sql: str, params: Any = ()) -> _CountingCursor:
        return _CountingCursor(self._conn.execute(sql, params), self._counter)


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> _Counter:
    """Counts every row the readers fetch, and the rows of each read separately."""
    found = _Counter()
    real = queries._open_readonly

    @contextmanager
    def counting(path: Any) -> Iterator[_CountingConnection]:
        before = found.rows
        with real(path) as conn:
            yield _CountingConnection(conn, found)
        found.reads.append(found.rows - before)

    monkeypatch.setattr(queries, "_open_readonly", counting)
    return found


def test_the_window_holds_the_failures_and_the_last_iterations(
    long_run: tuple[Path, str], counter: _Counter
) -> None:
    path, run_id = long_run

    detail = read_window(path, run_id, tail=20)

    numbers = [it.number for it in detail.iterations]
    assert numbers == [7, 12_345, *range(ITERATIONS - 19, ITERATIONS + 1)]
    assert detail.omitted_iterations == ITERATIONS - 22
    assert detail.summary.iterations_recorded == ITERATIONS
    assert [s.step_id for s in detail.iterations[0].steps] == list(STEPS)
    assert detail.iterations[-1].outputs == {"url": "u"}
    assert counter.rows < 200  # 22 iterations, their 66 steps, events and outputs


def test_show_all_pages_through_every_iteration_a_page_at_a_time(
    long_run: tuple[Path, str], counter: _Counter
) -> None:
    path, run_id = long_run

    seen = [it.number for page in iteration_pages(path, run_id, size=1000) for it in page]

    assert seen == list(range(1, ITERATIONS + 1))
    assert len(counter.reads) == ITERATIONS // 1000 + 1  # the last read finds nothing
    assert max(counter.reads) <= 1000 * (1 + 2 * len(STEPS) + 1)


def test_watch_rereads_only_what_may_have_changed(tmp_path: Path, counter: _Counter) -> None:
    path = tmp_path / "journal.db"
    with Journal.open(path) as journal:
        run_id = create_long_run(journal, 5000)
        _fill(journal, run_id, range(1, 3001))
        _fill(journal, run_id, range(3001, 3003), state="running")
        read = window_reader(tail=20)
        first = read(path, run_id, is_alive=lambda pid: True)
        journal.mark_iteration(run_id, 3001, _verified())
        _fill(journal, run_id, range(3003, 3006))
        rows_before = counter.rows
        second = read(path, run_id, is_alive=lambda pid: True)
        rows_second = counter.rows - rows_before

    assert [it.number for it in second.iterations] == [7, 3001, 3002, 3003, 3004, 3005]
    assert rows_second < 100  # six iterations, their steps and outputs; not 3,000
    lines = change_lines(first, second)
    assert "iteration 3001: running -> verified in 0.01 s" in lines
    assert any(line.startswith("iteration 3005: verified") for line in lines)


def _verified() -> Any:
    from northstar.results import IterationState

    return IterationState.VERIFIED


def test_show_prints_the_window_and_says_what_it_left_out(long_run: tuple[Path, str]) -> None:
    path, run_id = long_run

    result = CliRunner().invoke(cli, ["show", run_id, "--journal", str(path), "--last", "3"])

    assert result.exit_code == 0, result.output
    assert "iteration 12345  unknown" in result.output
    assert f"iteration {ITERATIONS}  verified" in result.output
    assert f"iteration {ITERATIONS - 3}  " not in result.output
    assert f"{ITERATIONS - 5} more verified iterations not shown" in result.output


def test_the_report_expands_failures_and_counts_the_verified(
    long_run: tuple[Path, str], tmp_path: Path, counter: _Counter
) -> None:
    path, run_id = long_run
    page = tmp_path / "report.html"

    result = CliRunner().invoke(cli, ["report", run_id, "--journal", str(path), "--out", str(page)])

    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert f"{ITERATIONS - 22} more verified iterations are counted, not listed" in html
    assert "Never started: iterations 20001–20010" in html
    assert counter.rows < 300


def test_files_of_a_long_run_are_found_and_a_new_one_is_not_missed(tmp_path: Path) -> None:
    from northstar.readers.artifacts import iteration_files

    for number in range(1, 2001):
        (tmp_path / f"iteration-{number:04d}.json").write_text("{}", encoding="utf-8")
    (tmp_path / "iteration-12345-after-admin.png").write_bytes(b"png")
    (tmp_path / "iteration-0007-trace.zip").write_bytes(b"zip")

    assert iteration_files(tmp_path, 12_345).screenshots == (
        tmp_path.resolve() / "iteration-12345-after-admin.png",
    )
    assert iteration_files(tmp_path, 7).trace == tmp_path.resolve() / "iteration-0007-trace.zip"
    assert not iteration_files(tmp_path, 8)
    (tmp_path / "iteration-0008-after-admin.png").write_bytes(b"png")
    assert iteration_files(tmp_path, 8).screenshots  # written just now: listed again
