"""Fixes of a broken recipe: proposed by an agent as a diff, applied only by a person.

``propose_fix`` validates the proposed text with the recipe loader (a proposal that does
not load is refused with the loader's coded error), then stores a unified diff of the
run's recipe file against it, with the file's sha256 at that moment. Nothing is written to
the recipe file. ``apply_fix`` (``northstar review --apply``) writes the proposed text
only while the file still has that sha256 (else ``FIX_OUTDATED``), atomically, and returns
the new definition hash: a run bound to the old one stays bound to it
(``DEFINITION_CHANGED`` on resume), so a fixed recipe is run as a new run.

``unified_diff`` and ``line_counts`` are pure; the rest is the thin I/O around them.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from northstar.errors import FixOutdated, UsageInvalid
from northstar.journal import FixProposal
from northstar.journal.store import Journal
from northstar.plan.compiler import prepare
from northstar.recipe.loader import parse_recipe_positions

__all__ = ["AppliedFix", "apply_fix", "line_counts", "propose_fix", "unified_diff"]


@dataclass(frozen=True, slots=True)
class AppliedFix:
    proposal_id: int
    recipe_path: str
    diff: str
    definition_hash: str


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=path,
        tofile=f"{path} (proposed)",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def line_counts(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff (its two file headers not counted)."""
    lines = diff.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return added, removed


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _definition_hash(text: str, source: str) -> str:
    """The definition hash of recipe text; the loader's coded error if it does not load."""
    recipe, positions = parse_recipe_positions(text, source=source)
    return prepare(recipe, source=source, positions=positions).recipe_hash


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageInvalid(
            f"cannot read the recipe file {path}: {exc.strerror or exc}",
            fix="Restore the recipe file the run was started from.",
        ) from exc


def propose_fix(journal: Journal, run_id: str, recipe_text: str) -> int:
    """Store the diff from the run's recipe file to ``recipe_text``; the proposal's id."""
    recipe_path = journal.run_record(run_id).recipe_path
    _definition_hash(recipe_text, recipe_path)
    current = _read(recipe_path)
    diff = unified_diff(recipe_path, current, recipe_text)
    if not diff:
        raise UsageInvalid(
            "the proposed recipe is the same as the file: there is nothing to review",
            run_id=run_id,
            fix="Propose the recipe text with the change that repairs the run.",
        )
    proposal = FixProposal(0, run_id, recipe_path, _sha256(current), diff, recipe_text, None)
    added, removed = line_counts(diff)
    return journal.add_fix_proposal(proposal, added=added, removed=removed)


def _proposal(journal: Journal, proposal_id: int) -> FixProposal:
    found = journal.fix_proposal(proposal_id)
    if found is None:
        raise UsageInvalid(
            f"no fix proposal {proposal_id} in the journal",
            fix="List the proposals with `northstar review`.",
        )
    return found


def apply_fix(journal: Journal, proposal_id: int) -> AppliedFix:
    """Write the proposal to its recipe file if the file is still what it was made against."""
    proposal = _proposal(journal, proposal_id)
    if _sha256(_read(proposal.recipe_path)) != proposal.base_sha256:
        raise FixOutdated(
            f"{proposal.recipe_path} changed since fix {proposal_id} was proposed; "
            "nothing was written",
            run_id=proposal.run_id,
        )
    definition_hash = _definition_hash(proposal.proposed_text, proposal.recipe_path)
    _write_atomically(Path(proposal.recipe_path), proposal.proposed_text)
    journal.mark_fix_applied(proposal_id, definition_hash)
    return AppliedFix(proposal_id, proposal.recipe_path, proposal.diff, definition_hash)


def _write_atomically(path: Path, text: str) -> None:
    """A reader sees the old file or the new one, never half of it."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, path.stat().st_mode & 0o7777)  # the recipe keeps its permissions
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
