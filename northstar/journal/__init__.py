"""The journal: a durable SQLite record of runs, iterations, steps, submissions and outputs.

``Journal`` is the writer (one per worker process); ``Journal.recorder(run_id)`` is the
runner's ``IterationRecorder``. Reading is done elsewhere, read-only, by
``northstar.readers``, which imports nothing from this package.

The file is found by ``resolve_journal_path``: an explicit path, then ``NORTHSTAR_JOURNAL``,
then ``.northstar/journal.db`` under the current directory.
"""

from northstar.journal._paths import DEFAULT_JOURNAL_PATH, JOURNAL_ENV, resolve_journal_path
from northstar.journal.recorder import JournalRecorder
from northstar.journal.schema import SCHEMA_VERSION, RunStatus, StepEvent, SubmissionState
from northstar.journal.store import Journal, RunRecord, SubmissionRecord

__all__ = [
    "DEFAULT_JOURNAL_PATH",
    "JOURNAL_ENV",
    "SCHEMA_VERSION",
    "Journal",
    "JournalRecorder",
    "RunRecord",
    "RunStatus",
    "StepEvent",
    "SubmissionRecord",
    "SubmissionState",
    "resolve_journal_path",
]
