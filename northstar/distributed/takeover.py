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

The one window left: a worker whose liveness connection drops while the process lives
loses its lock. It notices at its next check and stops serving (``JOURNAL_ERROR``), but a
survivor may recover its in-progress iterations before then; those are decided by the
journal, so a sent submission is still never sent again, while one that sent nothing may
be started by the survivor while the old lane still runs it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any

from northstar.errors import JournalError, UsageInvalid
from northstar.journal.paths import redact_url

__all__ = ["Liveness", "liveness_key", "takeover_candidates"]

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
        try:
            conn = psycopg.connect(journal_url, autocommit=True)
        except psycopg.Error as exc:
            raise JournalError(f"cannot reach {shown}", fix=_FIX_DB) from exc
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
            raise JournalError(f"cannot take worker {name}'s lock on {shown}", fix=_FIX_DB) from exc
        return cls(conn, name, shown)

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

    def _query(self, sql: str, key: int) -> bool:
        import psycopg

        try:
            row = self._conn.execute(sql, (key,)).fetchone()
        except psycopg.OperationalError as exc:
            raise JournalError(  # the lock went with the session: stop serving
                f"worker {self.name} lost its liveness connection to {self._shown_url}; "
                "it stops serving so no other worker runs its iterations twice",
                fix=_FIX_DB,
            ) from exc
        return bool(row[0])


_FIX_DB = "Check that Postgres is running and the journal URL is right, then start the worker."
