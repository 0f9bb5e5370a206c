"""The journal: a durable SQLite record of runs, iterations, steps, submissions and outputs.

``Journal`` is the writer (one per worker process); ``Journal.steps(run_id)`` records a
run's steps from plain values (the runner's recorder, ``northstar.run.recorder``, feeds
it); ``northstar.journal.submissions`` is the one rule for whether a submission may be
sent. Reading is done elsewhere, read-only, by
``northstar.readers``, which may import ``northstar.journal.paths`` (where the file and a
run's artifacts are) and nothing else from this package.

The file is found by ``resolve_journal_path``: an explicit path, then ``NORTHSTAR_JOURNAL``,
then ``.northstar/journal.db`` under the current directory.

Names load on first use, so ``import northstar.journal.paths`` does not bring the writer
(and tenacity) into a reader's process.

May import: ``northstar.errors``, ``northstar.results``, ``northstar.redaction``. Never
the recipe language or the plan (it keeps plain values), the run engine, a front end or
``browser_adapters``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from northstar._lazy import lazy_exports

if TYPE_CHECKING:
    from northstar.journal._diagnoses import FixProposal
    from northstar.journal._probe_controls import ProbeControl
    from northstar.journal.paths import (
        DEFAULT_JOURNAL_PATH,
        JOURNAL_ENV,
        resolve_journal_path,
        run_artifacts_dir,
    )
    from northstar.journal.schema import SCHEMA_VERSION, RunStatus, StepEvent, SubmissionState
    from northstar.journal.step_log import StepLog, StepRow
    from northstar.journal.store import Journal, RunRecord, SubmissionRecord
    from northstar.journal.submissions import SubmissionVerdict, submission_verdict

_HOMES = {
    "DEFAULT_JOURNAL_PATH": "northstar.journal.paths",
    "JOURNAL_ENV": "northstar.journal.paths",
    "SCHEMA_VERSION": "northstar.journal.schema",
    "FixProposal": "northstar.journal._diagnoses",
    "Journal": "northstar.journal.store",
    "ProbeControl": "northstar.journal._probe_controls",
    "RunRecord": "northstar.journal.store",
    "RunStatus": "northstar.journal.schema",
    "StepEvent": "northstar.journal.schema",
    "StepLog": "northstar.journal.step_log",
    "StepRow": "northstar.journal.step_log",
    "SubmissionRecord": "northstar.journal.store",
    "SubmissionState": "northstar.journal.schema",
    "SubmissionVerdict": "northstar.journal.submissions",
    "submission_verdict": "northstar.journal.submissions",
    "resolve_journal_path": "northstar.journal.paths",
    "run_artifacts_dir": "northstar.journal.paths",
}

__all__ = [
    "DEFAULT_JOURNAL_PATH",
    "JOURNAL_ENV",
    "SCHEMA_VERSION",
    "FixProposal",
    "Journal",
    "ProbeControl",
    "RunRecord",
    "RunStatus",
    "StepEvent",
    "StepLog",
    "StepRow",
    "SubmissionRecord",
    "SubmissionState",
    "SubmissionVerdict",
    "resolve_journal_path",
    "run_artifacts_dir",
    "submission_verdict",
]

__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())
