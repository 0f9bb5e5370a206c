"""The decisions behind a worker's outage handling, without a worker process.

Which driver errors mean "no answer now", which DBOS log lines are held back, the back-off
and its log lines (a probe that fails, then passes), the give-up, the stop deadline's
thread, and the journal's connection that stays lost once lost (on the session's Postgres).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import psycopg
import psycopg.errors
import pytest
from structlog.testing import capture_logs

from northstar.distributed.outage import (
    DatabaseWatch,
    Patience,
    QuietDbosLog,
    backoff_level,
    is_connection_noise,
)
from northstar.distributed.stopping import EXIT_CODES, StopDeadline, exit_code_for_error
from northstar.errors import JournalError, JournalUnavailable, UsageInvalid
from northstar.journal import Journal
from northstar.journal.postgres import connect_postgres, is_unavailable
from northstar.run.execution import StopSignal

REFUSED = 'connection failed: connection to server at "127.0.0.1", port 9 failed: '


@pytest.mark.parametrize(
    ("error", "unavailable"),
    [
        (psycopg.OperationalError(REFUSED + "Connection refused"), True),
        (psycopg.OperationalError(REFUSED + "FATAL:  sorry, too many clients already"), True),
        (psycopg.OperationalError(REFUSED + "FATAL:  the database system is starting up"), True),
        (psycopg.errors.AdminShutdown("terminating connection"), True),
        (psycopg.errors.TooManyConnections("sorry"), True),
        (psycopg.OperationalError(REFUSED + 'FATAL:  database "x" does not exist'), False),
        (psycopg.OperationalError(REFUSED + 'FATAL:  role "nobody" does not exist'), False),
        (psycopg.OperationalError(REFUSED + "FATAL:  password authentication failed"), False),
        (psycopg.errors.UniqueViolation("duplicate key"), False),
        (ValueError("not a driver error"), False),
    ],
)
def test_unavailable_means_no_answer_now_not_a_wrong_request(
    error: BaseException, unavailable: bool
) -> None:
    assert is_unavailable(error) is unavailable


# Lines DBOS 3.4 logged, several a second, while a worker's Postgres was stopped.
DBOS_OUTAGE_LINES = [
    "Notification listener error: consuming input failed: server closed the connection",
    "Exception taking the background_jobs lock: (psycopg.OperationalError) connection failed",
    "Exception listing queues: (psycopg.OperationalError) connection failed: Connection refused",
    "Exception polling schedules: Traceback (most recent call last):\n psycopg.OperationalError: "
    'connection failed: connection to server at "127.0.0.1", port 9 failed: Connection refused',
    "Database connection failed: (psycopg.OperationalError). Retrying in 0.75s (attempt 1)",
    "Exception encountered in queue thread for posts: FATAL:  sorry, too many clients already",
]


def test_dbos_lines_about_the_database_are_held_back_and_wake_the_supervisor() -> None:
    woken: list[bool] = []
    quiet = QuietDbosLog(lambda: woken.append(True))
    logger = logging.getLogger("dbos")
    records = [
        logger.makeRecord("dbos", logging.WARNING, "f", 1, m, (), None) for m in DBOS_OUTAGE_LINES
    ]
    assert [quiet.filter(record) for record in records] == [False] * len(records)
    assert quiet.held_back == len(woken) == len(records)
    for shown in ("Workflow w1 failed: bug", "(psycopg.errors.QueryCanceled) statement timeout"):
        other = logger.makeRecord("dbos", logging.WARNING, "f", 1, shown, (), None)
        assert quiet.filter(other) is True  # DBOS's other warnings are shown as they are
    assert not is_connection_noise("Recovering 3 workflows from application version v1")


def test_the_back_off_doubles_up_to_its_cap() -> None:
    patience = Patience(backoff_first=1, backoff_cap=30)
    assert [backoff_level(patience, n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 30, 30, 30]


class FlakyProbe:
    """Fails ``failures`` times (the database does not answer), then passes."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    async def __call__(self) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise JournalUnavailable(f"probe {self.calls}: connection refused")


QUICK = Patience(backoff_first=0.001, backoff_cap=0.004, give_up_after=600)


async def test_an_outage_is_one_line_a_line_per_doubling_and_one_line_back() -> None:
    watch, stop, probe = DatabaseWatch(QUICK, "postgresql://db"), StopSignal(), FlakyProbe(7)
    with capture_logs() as logs:
        watch.lost("lane 1: lost the connection")
        watch.lost("lane 2: lost the connection")  # the second one says nothing
        lanes = [asyncio.ensure_future(watch.back(stop)) for _ in range(2)]
        assert await watch.recover(probe, stop) is True
    assert await asyncio.gather(*lanes) == [True, True]  # the waiting lanes go on
    events = [(entry["event"], entry.get("next_probe_in_s")) for entry in logs]
    assert events == [
        ("database_unreachable", None),
        ("database_still_unreachable", 0.002),  # 8 probes, 4 lines: only the doublings
        ("database_still_unreachable", 0.004),
        ("database_reachable", None),
    ]
    assert probe.calls == 8
    assert watch.answering


async def test_past_the_bound_the_watch_gives_up_with_a_coded_error() -> None:
    patience = Patience(backoff_first=0.001, backoff_cap=0.001, give_up_after=0)
    watch, stop = DatabaseWatch(patience, "postgresql://db"), StopSignal()
    watch.lost("liveness lost")
    lane = asyncio.ensure_future(watch.back(stop))
    with pytest.raises(JournalUnavailable, match="did not answer for 0 s") as raised:
        await watch.recover(FlakyProbe(1000), stop)
    assert raised.value.code == "JOURNAL_UNAVAILABLE"
    assert watch.gave_up
    assert await lane is False  # a waiting lane leaves its iteration to recovery


async def test_a_stop_ends_the_recovery_and_the_waiting_lanes() -> None:
    watch, stop = DatabaseWatch(QUICK, "postgresql://db"), StopSignal()
    watch.lost("liveness lost")
    lane = asyncio.ensure_future(watch.back(stop))
    stop.request()
    assert await watch.recover(FlakyProbe(1000), stop) is False
    assert await lane is False
    assert not watch.gave_up


def test_the_stop_deadline_ends_the_process_only_when_the_stop_overruns_it() -> None:
    ended: list[int] = []
    said: list[int] = []
    over = threading.Event()

    def end_process(code: int) -> None:
        ended.append(code)
        over.set()

    on_time = StopDeadline(0.05, lambda: 0, end_process=end_process).start()
    on_time.arm()
    on_time.done()  # the worker drained in time
    on_time._thread.join(5)
    assert ended == []

    late = StopDeadline(0.05, lambda: 130, on_expiry=said.append, end_process=end_process)
    late.start().arm()
    assert over.wait(5)
    assert ended == said == [130]


def test_worker_exit_codes_by_error() -> None:
    assert exit_code_for_error(JournalUnavailable("gone")) == EXIT_CODES["journal_unavailable"]
    assert exit_code_for_error(UsageInvalid("same name")) == EXIT_CODES["bad_input"] == 2
    assert exit_code_for_error(JournalError("broken")) == EXIT_CODES["error"] == 1
    assert EXIT_CODES["journal_unavailable"] == 75
    assert EXIT_CODES["left_to_recovery"] == 130


def test_a_lost_journal_connection_stays_lost(postgres: Any) -> None:
    """A write whose outcome is unknown is never followed by the rest on a new session."""
    url = postgres.create_database("lost_connection")
    with Journal.open(url):  # the journal's tables
        pass
    conn = connect_postgres(url)
    with psycopg.connect(postgres.url(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (conn.raw.info.backend_pid,))
    for _ in range(2):  # the second statement is refused too: no silent reconnect
        with pytest.raises(JournalUnavailable, match="lost the connection"):
            conn.execute("SELECT count(*) FROM runs")
    assert conn.lost
    assert not conn.in_transaction  # the server rolled back whatever was open
    conn.close()


def test_a_connect_that_is_refused_is_unavailable_and_a_wrong_database_is_not(
    postgres: Any,
) -> None:
    with pytest.raises(JournalUnavailable, match="Connection refused"):
        connect_postgres("postgresql://postgres@127.0.0.1:9/none")
    with pytest.raises(JournalError) as wrong:
        connect_postgres(postgres.url("no_such_database"))
    assert not isinstance(wrong.value, JournalUnavailable)
