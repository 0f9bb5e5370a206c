"""``propose_fix``: an agent's repair of a recipe, stored as a diff for a person to review.

Before it is stored, the proposed recipe is replayed dry (``northstar.agent.dry_replay``:
in a fresh context, with its defaults and the run's base URL, up to its first submission,
which is only resolved): a proposal that does not replay is answered with what failed
and not stored. The tool writes one row to the journal and nothing else: the recipe file
is changed only by a person, with ``northstar review --apply ID``
(``northstar.run.fixes``). It needs no credential because it cannot start a run,
dispatch a step or change a file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations

from northstar.agent.dry_replay import DryReplay, prove_recipe
from northstar.browser import BrowserHost
from northstar.errors import JournalError
from northstar.journal import Journal
from northstar.mcp.shared_browser import SharedBrowser
from northstar.mcp.tool_results import answered
from northstar.readers.diagnoses import read_diagnoses
from northstar.run.fixes import line_counts, propose_fix

__all__ = ["propose_answer", "register_tools", "replay_proposal"]


def _journal(journal_path: Path) -> Journal:
    if not journal_path.is_file():  # no journal means no run: do not create one
        raise JournalError(
            f"no journal at {journal_path}",
            path=str(journal_path),
            fix="Diagnose a run of this server's journal (diagnose_run) first.",
        )
    return Journal.open(journal_path)


async def replay_proposal(
    journal_path: Path,
    run_id: str,
    recipe_text: str,
    host: BrowserHost,
    params: dict[str, Any] | None = None,
) -> DryReplay:
    """The proposal replayed dry, from a file beside the run's recipe (its uploads resolve
    the same way), removed afterwards; a proposal that does not load raises its error."""
    with _journal(journal_path) as journal:
        record = journal.run_record(run_id)
    recipe = Path(record.recipe_path)
    base_url = str(record.options.get("base_url") or "")
    with tempfile.NamedTemporaryFile(
        "w", suffix=".yaml", prefix=f".{recipe.stem}.proposed-", dir=recipe.parent,
        encoding="utf-8", delete=False,
    ) as written:  # fmt: skip
        written.write(recipe_text)
    try:
        return await prove_recipe(host, Path(written.name), base_url, params)
    finally:
        os.unlink(written.name)  # a small local file: removing it does not wait on I/O


def submits_elsewhere(journal_path: Path, run_id: str, proof: DryReplay) -> str | None:
    """Why the proposal's first submission would send another form than the step did when
    it last passed (its diagnosis says where), or ``None``."""
    step, where = proof.stopped_before, proof.submits_to
    for diagnosis in read_diagnoses(journal_path, run_id):
        expected = diagnosis.submitted_to
        if diagnosis.step == step and expected is not None and where != expected:
            return f"step {step!r} would submit to {where}, not {expected} as it last did"
    return None


def propose_answer(journal_path: Path, run_id: str, recipe_text: str) -> dict[str, Any]:
    with _journal(journal_path) as journal:
        proposal_id = propose_fix(journal, run_id, recipe_text)
        proposal = journal.fix_proposal(proposal_id)
    assert proposal is not None
    added, removed = line_counts(proposal.diff)
    return {
        "proposal_id": proposal_id,
        "run_id": run_id,
        "recipe_path": proposal.recipe_path,
        "lines_added": added,
        "lines_removed": removed,
        "diff": proposal.diff,
        "applied": False,
        "next": f"a person reviews it: northstar review --show {proposal_id}, "
        f"then northstar review --apply {proposal_id}",
    }


def register_tools(
    server: MCPServer[Any], *, journal_path: Path, browser: SharedBrowser | None = None
) -> None:
    """The tool ``propose_fix``; with ``browser``, each proposal is replayed dry first."""

    async def propose_fix_tool(
        run_id: str, recipe_text: str, params: dict[str, Any] | None = None
    ) -> CallToolResult:
        """Propose the whole repaired recipe (YAML) for a run's recipe file.

        It must load (else the loader's coded error, and nothing is stored), and it is
        replayed dry up to its first submission (resolved, never sent); one that does not
        replay is answered with the failing step and not stored. params: the run's
        parameters again (the journal keeps none), else the recipe's defaults. A unified
        diff against the file is stored for a person, who applies it with `northstar review
        --apply ID`; nothing changes until then. Returns the proposal's id, the diff and the
        replay's steps.
        """

        async def store() -> dict[str, Any]:
            if browser is None:
                return propose_answer(journal_path, run_id, recipe_text)
            host = await browser.host()
            proof = await replay_proposal(journal_path, run_id, recipe_text, host, params)
            elsewhere = submits_elsewhere(journal_path, run_id, proof)
            if not proof.replays or elsewhere is not None:
                said = elsewhere or proof.text
                return {"stored": False, "replay": proof.model_dump(), "said": said}
            stored = propose_answer(journal_path, run_id, recipe_text)
            return {**stored, "stored": True, "replay": proof.model_dump(), "said": proof.text}

        return await answered(store())

    server.add_tool(
        propose_fix_tool,
        name="propose_fix",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
    )
