"""Read-only views of the journal, for ``northstar runs``, ``show`` and ``watch``.

Readers and starters are separate (DESIGN §2): this package opens the journal with
``mode=ro`` and ``query_only``, and imports nothing that can start a run, write to the
journal or dispatch a step: not the run engine, not the journal's writer (only
``northstar.journal.paths``, ``postgres`` and ``workers``), not the composition root, no
browser code. The contracts in ``pyproject.toml`` check this.

- ``views``: the frozen dataclasses a reader hands back.
- ``liveness``: why a ``running`` run whose worker is gone is shown as ``interrupted``.
- ``queries``: opening the journal read-only and reading runs into views.
- ``follow``: re-reading one run until it is final (``watch``).
- ``artifacts``: the screenshots and traces a run left beside the journal.
- ``rendering``: the views as compact human text.
- ``changes``: what differs between two reads of a run (``watch``).
- ``report``: one run as a self-contained HTML page (``northstar report``).
- ``endings``: how a run ended (the table of endings, exit statuses, ``read_ending``),
  the one view every front end prints or returns at the end of a run.
- ``ending_text``: that ending as lines for a person, and the table for the docs.
"""

from __future__ import annotations

from northstar.readers.follow import follow_run
from northstar.readers.liveness import INTERRUPTED, pid_alive
from northstar.readers.queries import READ_SCHEMA_VERSION, get_run, list_runs
from northstar.readers.rendering import render_run, render_runs
from northstar.readers.views import IterationView, RunDetail, RunEvent, RunSummary, StepView

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
