"""``run_status``: a run as the journal holds it, through ``northstar.readers`` only.

A reader, like ``northstar show``: it needs no credential because it cannot start,
continue or change anything. This module imports the readers and nothing of the run
engine, the journal's writer or the browser (the ``readers-apart`` contract in
``pyproject.toml`` holds it to that).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations

from northstar import readers
from northstar.mcp.tool_results import answered
from northstar.readers import IterationView, RunDetail
from northstar.readers.endings import RunEnding, read_ending

__all__ = ["iteration_status", "register_tools", "run_status_answer"]


def iteration_status(iteration: IterationView) -> dict[str, Any]:
    """One iteration: verdict, outputs, evidence and model calls; the reason when not verified."""
    status: dict[str, Any] = {
        "iteration": iteration.number,
        "state": iteration.effective_state,
        "verified": iteration.state == "verified",
        "outputs": dict(iteration.outputs),
        "evidence_count": iteration.evidence_count,
        "model_calls": iteration.model_calls,
    }
    if iteration.state != "verified" and iteration.reason_code:
        status.update(
            reason_code=iteration.reason_code,
            reason=iteration.reason,
            failing_step=iteration.failing_step,
        )
    return status


def run_status_answer(detail: RunDetail, ending: RunEnding) -> dict[str, Any]:
    """The run's ending (status, counts, stop reason, next command) and its iterations."""
    summary = detail.summary
    return {
        **ending.to_dict(),
        "program": summary.recipe_name,
        "started_at": summary.started_at,
        "ended_at": summary.ended_at,
        "definition_hash": detail.definition_hash,
        "iterations": [iteration_status(iteration) for iteration in detail.iterations],
    }


def register_tools(server: MCPServer[Any], *, journal_path: Path) -> None:
    """The read-only tools: ``run_status``."""

    async def run_status(run_id: str) -> CallToolResult:
        """A run's status and each iteration's verdict, outputs and evidence, from the journal.

        Needs no credential and cannot start or change anything.
        """

        async def read() -> dict[str, Any]:
            detail = readers.get_run(journal_path, run_id)
            return run_status_answer(detail, read_ending(journal_path, run_id))

        return await answered(read())

    server.add_tool(run_status, annotations=ToolAnnotations(read_only_hint=True))
