"""SQL for positive controls: whether a recipe's reconcile probe has seen a known effect.

A probe that never found an effect it was known to have cannot tell "absent" from "I
cannot see": its text never matches, or it looks at a page the run's state does not show.
So after a submission is verified the run engine runs the probe once, read-only, and the
result is kept here per definition hash, base URL and submit step; the latest control
wins (a site that changed can make a proven probe blind). The detail (what the probe
looked for, what the page showed) is scrubbed of the plan's secrets before it is written.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from northstar.journal._db import JournalDb, sqlite_errors
from northstar.redaction import redact

__all__ = ["ProbeControl", "probe_control", "probe_controls", "record_probe_control"]


@dataclass(frozen=True, slots=True)
class ProbeControl:
    """The latest positive control of one submit step's probe."""

    definition_hash: str
    base_url: str
    step_id: str
    proven: bool  # the probe found the known effect
    run_id: str
    iteration: int
    detail: str
    checked_at: str


_COLUMNS = "definition_hash, base_url, step_id, proven, run_id, iteration, detail, checked_at"


def record_probe_control(db: JournalDb, control: ProbeControl, secrets: Collection[str]) -> None:
    """Keep ``control`` as the step's latest one (its ``checked_at`` is set here)."""
    db.execute(
        "record a probe control",
        f"INSERT INTO probe_controls ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (definition_hash, base_url, step_id) DO UPDATE SET "
        "proven = excluded.proven, run_id = excluded.run_id, "
        "iteration = excluded.iteration, detail = excluded.detail, "
        "checked_at = excluded.checked_at",
        (
            control.definition_hash,
            control.base_url,
            control.step_id,
            int(control.proven),
            control.run_id,
            control.iteration,
            redact(control.detail, secrets),
            db.stamp(),
        ),
    )


def probe_control(
    db: JournalDb, definition_hash: str, base_url: str, step_id: str
) -> ProbeControl | None:
    """The step's latest control, or ``None`` when its probe was never tried on an effect."""
    row = db.one(
        f"SELECT {_COLUMNS} FROM probe_controls "
        "WHERE definition_hash = ? AND base_url = ? AND step_id = ?",
        (definition_hash, base_url, step_id),
    )
    return None if row is None else _control(row)


def probe_controls(db: JournalDb, definition_hash: str) -> list[ProbeControl]:
    """Every control of a recipe definition, by base URL and step."""
    with sqlite_errors("read the probe controls"):
        rows = db.conn.execute(
            f"SELECT {_COLUMNS} FROM probe_controls WHERE definition_hash = ? "
            "ORDER BY base_url, step_id",
            (definition_hash,),
        ).fetchall()
    return [_control(row) for row in rows]


def _control(row: tuple[object, ...]) -> ProbeControl:
    hash_, base_url, step_id, proven, run_id, iteration, detail, checked_at = row
    return ProbeControl(
        str(hash_),
        str(base_url),
        str(step_id),
        bool(proven),
        str(run_id),
        int(str(iteration)),
        str(detail),
        str(checked_at),
    )
