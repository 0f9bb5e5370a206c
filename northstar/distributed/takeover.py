"""A dead worker's iterations taken over by a surviving worker, decided by liveness locks.

DBOS recovers an executor's unfinished workflows only when that executor starts again
(same ``--name``). To let the survivors do it instead, each worker holds a Postgres
*session* advisory lock keyed by its name (``liveness_key``) on a dedicated connection,
from before ``DBOS.launch`` until it exits; Postgres releases it when that connection
drops, so also when the process is killed. Every few seconds a worker lists the names
that own PENDING workflows of its queue (``takeover_candidates``) and tries each one's
lock: a lock it gets belongs to a worker that is gone. While holding it, and only then,
it asks DBOS to put that worker's pending workflows back on their queue; then it lets go.

Why nobody runs an iteration twice through this:

- A live worker holds its own lock, so nobody takes over its work.
- A restarted worker takes its own lock before DBOS recovers its workflows at launch; a
  survivor recovers only under that lock. The two recoveries never overlap, and DBOS's
  re-enqueue matches only PENDING workflows still owned by the dead name, so the second
  one finds nothing (the first one's workflows are queued or owned by their new runner).
- A recovered iteration is decided by the journal as any other (``claim_action``): one
  whose submission was in flight or dispatched becomes ``unknown`` and blocks the run.

A worker whose liveness session is lost while the process lives (the database restarted,
the network dropped) loses its lock. It takes it again (``retake``) as soon as the
database answers, and until then its lanes write nothing: each waits, then claims its
iteration again, decided by the journal. When the whole database went away, every worker
lost its lock at once: a worker that got its own back waits one back-off cap (plus one
check) before it takes anyone over, so each live peer has had a probe in which to take
its own lock back first.

The window left: a worker cut off from the database alone (a network partition) while
the others still reach it. A survivor may recover its in-progress iterations while the
cut-off lanes wait; those are decided by the journal, so a sent submission is still never
sent again (its in-flight record has one key), but the run may end ``blocked`` for a
reconcile where nothing was sent twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any

from northstar.errors import JournalError, JournalUnavailable, UsageInvalid
from northstar.journal.paths import redact_url
from northstar.journal.postgres import connect_error, is_unavailable

__all__ = ["Liveness", "fresh_session", "liveness_key", "takeover_candidates"]

_NAMESPACE = "northstar-worker-liveness:"


def liveness_key(executor_id: str) -> int:
    """A worker name as a signed 64-bit advisory lock key (stable across processes)."""
    digest = hashlib.sha256((_NAMESPACE + executor_id).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def takeover_candidates(owners: Iterable[str | None], me: str) -> list[str]:
    """The other workers that own pending work: the ones whose liveness to test, in order."""
    return sorted({owner for owner in owners if owner and owner != me})


class Liveness:
    """One worker's liveness lock, held on a dedicated connection for the worker's life."""

    def __init__(self, conn: Any, name: str, shown_url: str) -> None:
        self._conn = conn
        self.name = name
        self._shown_url = shown_url

    @classmethod
    def hold(cls, journal_url: str, name: str, *, wait_seconds: float = 30) -> Liveness:
        """Take this worker's lock, waiting a little for a survivor that is taking over.

        A lock still held after ``wait_seconds`` belongs to a live worker of the same name.
        """
        import psycopg

        shown = redact_url(journal_url)
        conn = _connect(journal_url)
        try:
            conn.execute(f"SET lock_timeout = {int(wait_seconds * 1000)}")
            conn.execute("SELECT pg_advisory_lock(%s)", (liveness_key(name),))
        except psycopg.errors.LockNotAvailable as exc:
            conn.close()
            raise UsageInvalid(
                f"a worker named {name!r} is already serving on {shown}",
                fix="Give each worker its own --name.",
            ) from exc
        except psycopg.Error as exc:  # any other failure is the database's: one coded line
            conn.close()
            raise _lock_error(f"cannot take worker {name}'s lock on {shown}", exc) from exc
        return cls(conn, name, shown)

    @classmethod
    def retake(cls, journal_url: str, name: str) -> Liveness:
        """This worker's lock again, after its session was lost; never waits for it.

        ``JournalUnavailable`` while another session holds it: a survivor that is taking
        this worker's work over (it lets go at once), or this worker's old session, which
        the server has not seen end yet. The caller tries again after its back-off.
        """
        import psycopg

        shown = redact_url(journal_url)
        conn = _connect(journal_url)
        try:
            taken = conn.execute("SELECT pg_try_advisory_lock(%s)", (liveness_key(name),))
            held = bool(taken.fetchone()[0])
        except psycopg.Error as exc:
            conn.close()
            raise _lock_error(f"cannot take worker {name}'s lock on {shown}", exc) from exc
        if not held:
            conn.close()
            raise JournalUnavailable(
                f"worker {name}'s liveness lock on {shown} is still held by another session",
                fix=_FIX_DB,
            )
        return cls(conn, name, shown)

    @property
    def lost(self) -> bool:
        return bool(self._conn.broken or self._conn.closed)

    def check(self) -> None:
        """``JournalUnavailable`` if the session that holds the lock is gone."""
        self._query("SELECT true")

    def try_take_over(self, executor_id: str, recover: Callable[[str], int]) -> int | None:
        """``recover(executor_id)`` under that worker's lock if it is free; else ``None``."""
        key = liveness_key(executor_id)
        if not self._query("SELECT pg_try_advisory_lock(%s)", key):
            return None  # its worker is alive (or another survivor is taking over)
        try:
            return recover(executor_id)
        finally:
            self._query("SELECT pg_advisory_unlock(%s)", key)

    def close(self) -> None:
        self._conn.close()  # the lock goes with the session

    def _query(self, sql: str, *params: int) -> bool:
        import psycopg

        try:
            row = self._conn.execute(sql, params).fetchone()
        except psycopg.OperationalError as exc:
            raise JournalUnavailable(  # the lock went with the session
                f"worker {self.name} lost its liveness connection to {self._shown_url}",
                fix=_FIX_DB,
            ) from exc
        return bool(row[0])


def fresh_session(journal_url: str) -> None:
    """A new session opens and closes: ``JournalUnavailable`` if the server refuses it."""
    _connect(journal_url).close()


def _connect(journal_url: str) -> Any:
    import psycopg

    try:
        return psycopg.connect(journal_url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        raise connect_error(exc, journal_url) from None


def _lock_error(message: str, exc: BaseException) -> JournalError:
    if is_unavailable(exc):
        return JournalUnavailable(message, fix=_FIX_DB)
    return JournalError(message, fix=_FIX_DB)


_CONNECT_TIMEOUT_S = 10
_FIX_DB = "Check that Postgres is running and the journal URL is right, then start the worker."
