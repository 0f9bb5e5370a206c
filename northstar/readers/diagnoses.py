"""Read-only views of what the journal keeps when a recipe breaks: diagnoses and fix proposals.

A diagnosis is written by the run engine when a step fails on its target or an expectation
(``northstar.run.diagnosis``); a fix proposal by an agent (``propose_fix``) for a person to
review. Both are read here with the same read-only connection as ``queries``; the text
forms are for ``northstar show`` (the "diagnosis" block) and ``northstar review``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from northstar.errors import RunNotFound, UsageInvalid
from northstar.readers.queries import _open_readonly, shown_journal

__all__ = [
    "DiagnosisView",
    "ProposalView",
    "get_proposal",
    "list_proposals",
    "read_diagnoses",
    "render_diagnoses",
    "render_proposals",
]

_SHOWN_CHANGES = 12  # lines of the screen change in `show`; the whole of it is in --json


@dataclass(frozen=True, slots=True)
class DiagnosisView:
    """Why a step failed on its target or an expectation, and what the page showed."""

    iteration: int
    step: str
    tab: str
    code: str
    message: str
    target: str | None
    candidates: tuple[dict[str, Any], ...]
    observation: str | None  # the tab as compact text at the failure
    changes: str | None  # what changed on the tab since the step last passed
    note: str | None
    at: str
    # Where the step's element submitted when it last passed (``"POST /path"``); a
    # candidate that submits elsewhere is flagged ``submits_elsewhere``.
    submitted_to: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ProposalView:
    """A proposed fix of a recipe file, waiting for (or applied by) a person."""

    proposal_id: int
    run_id: str
    recipe_path: str
    created_at: str
    lines_added: int
    lines_removed: int
    applied_at: str | None
    applied_hash: str | None
    diff: str = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_diagnoses(path: str | os.PathLike[str], run_id: str) -> tuple[DiagnosisView, ...]:
    """The run's diagnoses, oldest first; ``RunNotFound`` if the journal has no such run."""
    with _open_readonly(path) as conn:
        if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
            raise RunNotFound(
                f"no run {run_id!r} in the journal at {shown_journal(path)}", run_id=run_id
            )
        rows = conn.execute(
            "SELECT at, diagnosis_json FROM diagnoses WHERE run_id = ? ORDER BY id", (run_id,)
        ).fetchall()
    return tuple(_diagnosis(at, json.loads(text)) for at, text in rows)


def _diagnosis(at: str, stored: dict[str, Any]) -> DiagnosisView:
    return DiagnosisView(
        iteration=int(stored.get("iteration", 0)),
        step=str(stored.get("step", "")),
        tab=str(stored.get("tab", "")),
        code=str(stored.get("code", "")),
        message=str(stored.get("message", "")),
        target=stored.get("target"),
        candidates=tuple(stored.get("candidates") or ()),
        observation=stored.get("observation"),
        changes=stored.get("changes"),
        note=stored.get("note"),
        at=at,
        submitted_to=stored.get("submitted_to"),
    )


_PROPOSAL_COLUMNS = (
    "id, run_id, recipe_path, created_at, lines_added, lines_removed, applied_at, "
    "applied_hash, diff"
)


def list_proposals(path: str | os.PathLike[str], limit: int = 50) -> list[ProposalView]:
    """The newest proposals first."""
    if limit < 1:
        raise UsageInvalid(f"--limit must be at least 1, not {limit}")
    with _open_readonly(path) as conn:
        rows = conn.execute(
            f"SELECT {_PROPOSAL_COLUMNS} FROM fix_proposals ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()
    return [ProposalView(*row) for row in rows]


def get_proposal(path: str | os.PathLike[str], proposal_id: int) -> ProposalView:
    with _open_readonly(path) as conn:
        row = conn.execute(
            f"SELECT {_PROPOSAL_COLUMNS} FROM fix_proposals WHERE id = ?", (proposal_id,)
        ).fetchone()
    if row is None:
        raise UsageInvalid(
            f"no fix proposal {proposal_id} in the journal at {shown_journal(path)}",
            fix="List the proposals with `northstar review`.",
        )
    return ProposalView(*row)


# Text.


def _candidate(candidate: dict[str, Any]) -> str:
    elsewhere = ", submits elsewhere" if candidate.get("submits_elsewhere") else ""
    closeness = candidate.get("closeness")
    return f'{candidate.get("role")} "{candidate.get("name")}" ({closeness}{elsewhere})'


def _render_one(diagnosis: DiagnosisView) -> list[str]:
    lines = [
        f"diagnosis: iteration {diagnosis.iteration}, step {diagnosis.step} "
        f"[{diagnosis.tab}] {diagnosis.code}",
        f"  looked for: {diagnosis.target or '-'}",
        "  candidates: " + (", ".join(map(_candidate, diagnosis.candidates)) or "none"),
    ]
    if diagnosis.changes:
        changes = diagnosis.changes.splitlines()[1:]  # the first line is the tab's header
        lines += [f"  {line}" for line in changes[:_SHOWN_CHANGES]]
        if len(changes) > _SHOWN_CHANGES:
            lines.append(f"  (and {len(changes) - _SHOWN_CHANGES} more lines: show --json)")
    if diagnosis.note:
        lines.append(f"  note: {diagnosis.note}")
    return lines


def render_diagnoses(diagnoses: tuple[DiagnosisView, ...]) -> str:
    """The "diagnosis" block of ``northstar show``; empty when there is none."""
    return "\n".join(line for d in diagnoses for line in _render_one(d))


def render_proposals(proposals: list[ProposalView]) -> str:
    if not proposals:
        return "no fix proposals"
    lines = ["id  run              recipe  proposed at  +/-  applied"]
    for p in proposals:
        applied = f"applied {p.applied_at} ({p.applied_hash})" if p.applied_at else "not applied"
        lines.append(
            f"{p.proposal_id}  {p.run_id}  {p.recipe_path}  {p.created_at}  "
            f"+{p.lines_added} -{p.lines_removed}  {applied}"
        )
    return "\n".join(lines)
