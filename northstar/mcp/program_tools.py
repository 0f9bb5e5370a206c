"""Programs first: list, describe and call stored recipes; reconcile and resume their runs.

Calling a stored procedure is one tool call, and it is the same journaled run as
``northstar run``: ``call_program`` builds a ``RunRequest`` with the CLI's checks
(``northstar.mcp.requests``) and hands it to ``northstar.composition.run_recipe`` on the
server's one browser; ``reconcile_run`` and ``resume_run`` go through
``northstar.composition.reconcile`` / ``resume``. Those two act on a run, so they take the
run's credential from the caller and nowhere else (not the credential file the server
could read), and check it before anything else: a wrong one is ``CREDENTIALS_INVALID``.
A person's verdict (``northstar reconcile --mark``) is not offered to an agent.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from northstar.composition import reconcile, resume, run_recipe
from northstar.errors import NorthstarError
from northstar.journal import Journal
from northstar.mcp.catalogue import read_catalogue
from northstar.mcp.descriptions import program_brief, program_detail
from northstar.mcp.requests import ProgramInputs, program_request, recorded_request
from northstar.mcp.shared_browser import SharedBrowser
from northstar.mcp.tool_results import answer, answered, error_line, refusal
from northstar.readers.ending_text import ending_lines
from northstar.readers.endings import RunEnding, read_ending
from northstar.results import IterationResult
from northstar.run.execution import RunOutcome

__all__ = ["ProgramTools", "iteration_answer", "outcome_answer", "register_tools"]

OnResult = Callable[[IterationResult], None]


def iteration_answer(result: IterationResult) -> dict[str, Any]:
    """One iteration: verified or not, outputs, evidence and model calls; why, when not."""
    out: dict[str, Any] = {
        "iteration": result.iteration,
        "verified": result.verified,
        "state": str(result.state),
        "outputs": dict(result.outputs),
        "evidence_count": result.evidence_count,
        "model_calls": result.model_calls,
    }
    if not result.verified:
        out.update(
            reason_code=result.reason_code, reason=result.reason, failing_step=result.failing_step
        )
    return out


def outcome_answer(outcome: RunOutcome, ending: RunEnding) -> dict[str, Any]:
    """The run's ending as the journal holds it, its credential, and this call's iterations."""
    return {
        "run_id": outcome.run_id,
        "credential": outcome.credential,
        **ending.to_dict(),
        "iterations": [iteration_answer(result) for result in outcome.results],
        "error": error_line(outcome.error) if outcome.error else None,
    }


def outcome_result(outcome: RunOutcome, journal: Path | str) -> CallToolResult:
    """A run that did not verify every iteration is a tool error: the ending's lines (what
    ``northstar run`` prints), then the whole run as data."""
    ending = read_ending(journal, outcome.run_id)
    data = outcome_answer(outcome, ending)
    if ending.status == "verified":
        return answer(data)
    result = answer(data)
    result.content.insert(0, TextContent(type="text", text="\n".join(ending_lines(ending))))
    result.structured_content = {**data, "error": _error_data(outcome, ending)}
    result.is_error = True
    return result


def _error_data(outcome: RunOutcome, ending: RunEnding) -> dict[str, Any] | None:
    """The error that ended the run, else the journal's stop reason."""
    if outcome.error is not None:
        return outcome.error.to_dict()
    return None if ending.reason is None else ending.reason.to_dict()


def progress_message(result: IterationResult) -> str:
    verdict = "verified" if result.verified else f"{result.state} ({result.reason_code})"
    return f"iteration {result.iteration}: {verdict}"


async def with_progress(
    ctx: Context[Any, Any], total: int | None, start: Callable[[OnResult], Awaitable[RunOutcome]]
) -> RunOutcome:
    """Run ``start`` and send one MCP progress notification per finished iteration, in order.

    The run reports iterations through a plain callback; a task beside it sends them,
    so a slow client never holds up the run's next step.
    """
    send, receive = anyio.create_memory_object_stream[IterationResult](math.inf)
    failure: NorthstarError | None = None

    async def report() -> None:
        done = 0
        async with receive:
            async for result in receive:
                done += 1
                await ctx.report_progress(done, total, progress_message(result))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(report)
        with send:
            try:
                outcome = await start(send.send_nowait)
            except NorthstarError as exc:  # re-raised outside the group, not wrapped in it
                failure = exc
    if failure is not None:
        raise failure
    return outcome


@dataclass(frozen=True)
class ProgramSettings:
    folders: tuple[Path, ...]
    journal_path: Path
    project: str = "default"


class ProgramTools:
    """The program tools' work, apart from the MCP wiring (``register_tools``)."""

    def __init__(self, settings: ProgramSettings, browser: SharedBrowser) -> None:
        self.settings = settings
        self.browser = browser

    async def list_programs(self) -> dict[str, Any]:
        catalogue = read_catalogue(self.settings.folders)
        return {
            "programs": [program_brief(p.compiled, p.path) for p in catalogue.programs.values()],
            "problems": [
                {"path": str(p.path), "error": error_line(p.error)} for p in catalogue.problems
            ],
        }

    async def describe_program(self, name: str) -> dict[str, Any]:
        program = read_catalogue(self.settings.folders).find(name)
        return program_detail(program.compiled, program.path)

    async def call_program(
        self, name: str, inputs: ProgramInputs, ctx: Context[Any, Any]
    ) -> RunOutcome:
        program = read_catalogue(self.settings.folders).find(name)
        request = program_request(
            program, inputs, folders=self.settings.folders, project=self.settings.project
        )
        host = await self.browser.host()
        return await with_progress(
            ctx,
            request.repeat.count,
            lambda on_result: run_recipe(
                request, journal_path=self.settings.journal_path, on_result=on_result, host=host
            ),
        )

    async def reconcile_run(
        self, run_id: str, credential: str, inputs: ProgramInputs
    ) -> dict[str, Any]:
        with Journal.open(self.settings.journal_path) as journal:
            journal.check_credential(run_id, credential)  # before the recipe is even read
            request = recorded_request(journal, run_id, inputs, folders=self.settings.folders)
            host = await self.browser.host()
            decisions = await reconcile(run_id, credential, request, journal, host=host)
            status = journal.run_record(run_id).status
        return {
            "run_id": run_id,
            "status": status,
            "iterations": [
                {
                    "iteration": decision.iteration,
                    "state": str(decision.state),
                    "reason": decision.reason,
                    "probes": {step: str(verdict) for step, verdict in decision.verdicts},
                }
                for decision in decisions
            ],
        }

    async def resume_run(
        self, run_id: str, credential: str, inputs: ProgramInputs, ctx: Context[Any, Any]
    ) -> RunOutcome:
        with Journal.open(self.settings.journal_path) as journal:
            journal.check_credential(run_id, credential)
            request = recorded_request(journal, run_id, inputs, folders=self.settings.folders)
            host = await self.browser.host()
            return await with_progress(
                ctx,
                None,
                lambda on_result: resume(
                    run_id, credential, request, journal, on_result=on_result, host=host
                ),
            )


async def _outcome(work: Awaitable[RunOutcome], journal: Path | str) -> CallToolResult:
    try:
        return outcome_result(await work, journal)
    except NorthstarError as exc:
        return refusal(exc)


def register_tools(server: MCPServer[Any], programs: ProgramTools) -> None:
    """list_programs, describe_program, call_program, reconcile_run, resume_run."""
    journal = programs.settings.journal_path

    async def list_programs() -> CallToolResult:
        """The stored programs (recipes) this server can run: name, description, required
        params, whether a base_url is needed. Call a fitting program before exploring."""
        return await answered(programs.list_programs())

    async def describe_program(name: str) -> CallToolResult:
        """One program in full: params (type, required, secret, default), tab roles, one line
        per step, outputs, done_when, and the definition hash a run binds to."""
        return await answered(programs.describe_program(name))

    async def call_program(
        name: str,
        ctx: Context[Any, Any],
        params: dict[str, Any] | None = None,
        rows: list[dict[str, Any]] | None = None,
        repeat: int | None = None,
        interval: int = 0,
        base_url: str | None = None,
    ) -> CallToolResult:
        """Run a stored program: `params` for every iteration, or `rows` (one iteration each);
        `repeat` iterations (1-100000), `interval` whole seconds between them (0-86400).
        Each iteration is verified before the next starts. Answers the run id, its credential
        (keep it: reconcile_run and resume_run need it) and per iteration: verified, outputs,
        evidence_count, model_calls, and the reason when not verified. One progress
        notification per iteration."""
        inputs = ProgramInputs(params, rows, repeat, interval, base_url)
        return await _outcome(programs.call_program(name, inputs, ctx), journal)

    async def reconcile_run(
        run_id: str,
        credential: str,
        params: dict[str, Any] | None = None,
        rows: list[dict[str, Any]] | None = None,
        base_url: str | None = None,
    ) -> CallToolResult:
        """Find out what happened to a blocked run's unknown submissions with the program's
        read-only probes. Needs the run's credential and the same params/rows it ran with."""
        inputs = ProgramInputs(params, rows, base_url=base_url)
        return await answered(programs.reconcile_run(run_id, credential, inputs))

    async def resume_run(
        run_id: str,
        credential: str,
        ctx: Context[Any, Any],
        params: dict[str, Any] | None = None,
        rows: list[dict[str, Any]] | None = None,
        base_url: str | None = None,
    ) -> CallToolResult:
        """Run a run's iterations that are not verified yet, once every outcome is settled;
        never sends a settled submission again. Needs the run's credential and its params."""
        inputs = ProgramInputs(params, rows, base_url=base_url)
        return await _outcome(programs.resume_run(run_id, credential, inputs, ctx), journal)

    read_only = ToolAnnotations(read_only_hint=True)
    server.add_tool(list_programs, annotations=read_only)
    server.add_tool(describe_program, annotations=read_only)
    server.add_tool(call_program, annotations=ToolAnnotations(destructive_hint=True))
    server.add_tool(reconcile_run, annotations=ToolAnnotations(idempotent_hint=True))
    server.add_tool(resume_run, annotations=ToolAnnotations(destructive_hint=True))
