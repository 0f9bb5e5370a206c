"""DBOS Transact for Northstar: its configuration, and enqueuing a run's iterations.

DBOS keeps its queue and workflow records in the journal's own Postgres database (schema
``dbos``), so a worker needs one URL. Every process uses one application version, so a
worker takes any queued iteration whatever its own code's hash (the binding check is
Northstar's: the recipe's definition hash, checked per iteration).

``enqueue_iterations`` enqueues each iteration under ``workflow_id(run, iteration)``: an id
DBOS already has returns the recorded workflow instead of a new one, so enqueuing a run
twice (a retried command) never queues an iteration twice.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from dbos import DBOS, DBOSClient, DBOSConfig, EnqueueOptions

from northstar.distributed.decisions import workflow_id
from northstar.errors import JournalError
from northstar.journal.paths import redact_url

__all__ = ["APP_NAME", "APP_VERSION", "WORKFLOW", "dbos_config", "enqueue_iterations"]

APP_NAME = "northstar"
APP_VERSION = "northstar-iteration-1"  # bump when the workflow's arguments change
WORKFLOW = "northstar_iteration"


def dbos_config(journal_url: str, *, executor_id: str) -> DBOSConfig:
    return {
        "name": APP_NAME,
        "system_database_url": journal_url,
        "executor_id": executor_id,
        "application_version": APP_VERSION,
        "log_level": "WARNING",
    }


QueuedIteration = tuple[int, dict[str, Any], str]  # number, row without secrets, fingerprint


def enqueue_iterations(
    journal_url: str, queue_name: str, run_id: str, iterations: Sequence[QueuedIteration]
) -> list[str]:
    """Enqueue each iteration once; the workflow ids."""
    with _system_database(journal_url), _client(journal_url) as client:
        ids = []
        for number, row, fingerprint in iterations:
            options: EnqueueOptions = {
                "workflow_name": WORKFLOW,
                "queue_name": queue_name,
                "workflow_id": workflow_id(run_id, number),
                "app_version": APP_VERSION,
            }
            ids.append(client.enqueue(options, run_id, number, row, fingerprint).workflow_id)
        return ids


@contextmanager
def _system_database(journal_url: str) -> Iterator[None]:
    """DBOS's tables exist (created or migrated here), with no DBOS launched in this process.

    A launched DBOS would serve every queue a worker registered in the database, and could
    take iterations this short-lived command then leaves pending.
    """
    try:
        DBOS.migrate(journal_url)
        yield
    except Exception as exc:
        raise _queue_error(journal_url, exc) from exc


@contextmanager
def _client(journal_url: str) -> Iterator[DBOSClient]:
    client = DBOSClient(system_database_url=journal_url, application_name=APP_NAME)
    try:
        yield client
    finally:
        client.destroy()


def _queue_error(journal_url: str, exc: Exception) -> JournalError:
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return JournalError(
        f"cannot enqueue on {redact_url(journal_url)}: {text.replace(journal_url, '***')}",
        fix="Check that Postgres is running and the journal URL is right.",
    )
