"""``diagnose_run``: why a run's step failed on its target or an expectation, for an agent.

A reader, like ``run_status``: it reads the journal through ``northstar.readers`` only,
needs no credential and cannot start, continue or change anything (the ``readers-apart``
contract in ``pyproject.toml`` holds this module to that).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations

from northstar import readers
from northstar.mcp.tool_results import answered
from northstar.readers.diagnoses import read_diagnoses

__all__ = ["diagnose_answer", "register_tools"]


def diagnose_answer(journal_path: Path, run_id: str) -> dict[str, Any]:
    """The run's status and reason, with every diagnosis the journal holds for it."""
    detail = readers.get_run(journal_path, run_id)
    failed = [i for i in detail.iterations if i.state != "verified" and i.reason_code]
    return {
        "run_id": run_id,
        "program": detail.summary.recipe_name,
        "recipe_path": detail.summary.recipe_path,
        "status": detail.effective_status,
        "definition_hash": detail.definition_hash,
        "failures": [
            {"iteration": i.number, "reason_code": i.reason_code, "failing_step": i.failing_step}
            for i in failed
        ],
        "diagnoses": [d.to_dict() for d in read_diagnoses(journal_path, run_id)],
    }


def register_tools(server: MCPServer[Any], *, journal_path: Path) -> None:
    """The read-only tool ``diagnose_run``."""

    async def diagnose_run(run_id: str) -> CallToolResult:
        """Why a run stopped on a missing or ambiguous target or a failed expectation.

        For each failing step: what it looked for, the candidates on the page (same role, or
        a close name), the tab as text at the failure, and what changed on it since the step
        last passed. Read it, then propose_fix with the repaired recipe for a person to
        review. Needs no credential and cannot start or change anything.
        """

        async def read() -> dict[str, Any]:
            return diagnose_answer(journal_path, run_id)

        return await answered(read())

    server.add_tool(diagnose_run, annotations=ToolAnnotations(read_only_hint=True))
