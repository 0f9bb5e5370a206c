"""``propose_fix``: an agent's repair of a recipe, stored as a diff for a person to review.

The tool writes one row to the journal and nothing else: the recipe file is changed only
by a person, with ``northstar review --apply ID`` (``northstar.run.fixes``). It needs
no credential because it cannot start a run, dispatch a step or change a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations

from northstar.errors import JournalError
from northstar.journal import Journal
from northstar.mcp.tool_results import answered
from northstar.run.fixes import line_counts, propose_fix

__all__ = ["propose_answer", "register_tools"]


def propose_answer(journal_path: Path, run_id: str, recipe_text: str) -> dict[str, Any]:
    if not journal_path.is_file():  # no journal means no run: do not create one
        raise JournalError(
            f"no journal at {journal_path}",
            path=str(journal_path),
            fix="Diagnose a run of this server's journal (diagnose_run) first.",
        )
    with Journal.open(journal_path) as journal:
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


def register_tools(server: MCPServer[Any], *, journal_path: Path) -> None:
    """The tool ``propose_fix``."""

    async def propose_fix_tool(run_id: str, recipe_text: str) -> CallToolResult:
        """Propose the whole repaired recipe (YAML) for a run's recipe file.

        It must load (else the loader's coded error, and nothing is stored). A unified diff
        against the file is stored for a person, who applies it with `northstar review
        --apply ID`; nothing changes until then. Returns the proposal's id and the diff.
        """

        async def store() -> dict[str, Any]:
            return propose_answer(journal_path, run_id, recipe_text)

        return await answered(store())

    server.add_tool(
        propose_fix_tool,
        name="propose_fix",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
    )
