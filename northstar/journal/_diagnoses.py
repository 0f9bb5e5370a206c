"""SQL for what helps when a recipe breaks: step baselines, diagnoses and fix proposals.

A baseline is a compact observation of a step's tab, taken before the step acted and kept
once the step passed: at most one per recipe step per run. A diagnosis is written when a
step fails on its target or an expectation. Both arrive as plain JSON-like data and are
scrubbed of the plan's secret values here, before anything is written.

A fix proposal is an agent's edit of a recipe file, kept for a person: the unified diff
they review, the file's sha256 it was made against and the text it leads to. Applying it
writes that text only while the file still has that sha256 (``northstar review --apply``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from northstar.journal._db import JournalDb
from northstar.redaction import redact_data

__all__ = [
    "FixProposal",
    "has_baseline",
    "insert_baseline",
    "insert_diagnosis",
    "insert_proposal",
    "latest_baseline",
    "mark_applied",
    "proposal",
]


def _json(value: Mapping[str, Any], secrets: Collection[str]) -> str:
    return json.dumps(redact_data(dict(value), secrets), separators=(",", ":"), default=str)


def has_baseline(db: JournalDb, run_id: str, step_id: str) -> bool:
    row = db.one("SELECT 1 FROM step_baselines WHERE run_id = ? AND step_id = ?", (run_id, step_id))
    return row is not None


def insert_baseline(
    db: JournalDb,
    run_id: str,
    where: tuple[int, str, str],
    observation: Mapping[str, Any],
    secrets: Collection[str],
) -> None:
    """The step's baseline for this run; the first one kept stays (``where``: iteration,
    step, tab)."""
    iteration, step_id, tab = where
    db.execute(
        "record a step baseline",
        "INSERT INTO step_baselines (run_id, step_id, iteration, tab, "
        "observation_json, at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (run_id, step_id, iteration, tab, _json(observation, secrets), db.stamp()),
    )


def latest_baseline(db: JournalDb, run_id: str, step_id: str) -> dict[str, Any] | None:
    """The newest baseline of this step from any run of the same recipe file (this one too)."""
    row = db.one(
        "SELECT b.observation_json FROM step_baselines b JOIN runs r ON r.run_id = b.run_id "
        "WHERE b.step_id = ? AND r.recipe_path = "
        "(SELECT recipe_path FROM runs WHERE run_id = ?) "
        "ORDER BY b.at DESC, b.rowid DESC LIMIT 1",
        (step_id, run_id),
    )
    if row is None:
        return None
    found: dict[str, Any] = json.loads(row[0])
    return found


def insert_diagnosis(
    db: JournalDb,
    run_id: str,
    iteration: int,
    diagnosis: Mapping[str, Any],
    secrets: Collection[str],
) -> None:
    db.execute(
        "record a diagnosis",
        "INSERT INTO diagnoses (run_id, iteration, step_id, code, at, diagnosis_json) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            run_id,
            iteration,
            str(diagnosis.get("step", "")),
            str(diagnosis.get("code", "")),
            db.stamp(),
            _json(diagnosis, secrets),
        ),
    )


@dataclass(frozen=True, slots=True)
class FixProposal:
    """A stored proposal, as ``review --apply`` needs it."""

    proposal_id: int
    run_id: str
    recipe_path: str
    base_sha256: str
    diff: str
    proposed_text: str
    applied_at: str | None


def insert_proposal(db: JournalDb, proposal: FixProposal, added: int, removed: int) -> int:
    cursor = db.execute(
        "record a fix proposal",
        "INSERT INTO fix_proposals (run_id, recipe_path, base_sha256, diff, proposed_text, "
        "lines_added, lines_removed, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            proposal.run_id,
            proposal.recipe_path,
            proposal.base_sha256,
            proposal.diff,
            proposal.proposed_text,
            added,
            removed,
            db.stamp(),
        ),
    )
    rows = cursor.fetchall()  # to the end: SQLite commits the insert when the statement ends
    return int(rows[0][0])


def proposal(db: JournalDb, proposal_id: int) -> FixProposal | None:
    row = db.one(
        "SELECT id, run_id, recipe_path, base_sha256, diff, proposed_text, applied_at "
        "FROM fix_proposals WHERE id = ?",
        (proposal_id,),
    )
    return None if row is None else FixProposal(*row)


def mark_applied(db: JournalDb, proposal_id: int, definition_hash: str) -> None:
    db.execute(
        "mark a fix proposal applied",
        "UPDATE fix_proposals SET applied_at = ?, applied_hash = ? WHERE id = ?",
        (db.stamp(), definition_hash, proposal_id),
    )
