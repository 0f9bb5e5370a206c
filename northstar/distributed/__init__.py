"""Distributed runs: a run's iterations as DBOS workflows on a queue, served by workers.

A front end (DESIGN §9): ``northstar run ... --queue NAME`` records the run in a Postgres
journal and enqueues one workflow per iteration (``submit``); ``northstar worker`` serves
the queue with one browser and K lanes (``worker``), running each iteration through the
same run engine, binding checks and journal as a local run. What to do with an iteration,
including one recovered from a dead worker, is decided from the journal by the plain
functions in ``decisions``; ``dbos_setup`` holds DBOS's configuration and the enqueue.
A worker's ``supervisor`` keeps its liveness lock (``takeover``), takes dead workers'
work over, and watches the database (``outage``: the back-off, quiet logs, the give-up);
``stopping`` bounds its exit and names its exit codes.

May import: the composition root (for the browser host), the run engine, the journal,
the readers, plans and recipes, and ``dbos``. Never another front end (cli, mcp, cases,
agent) and never ``browser_adapters`` directly. ``dbos`` is the optional extra
``northstar[distributed]``; nothing here is imported unless a distributed command runs.
"""

from __future__ import annotations

__all__: list[str] = []
