"""Whole program runs for the command line and the Python API: journal and browser opened here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from northstar.browser.settings import BrowserSettings
from northstar.composition import open_host
from northstar.errors import DefinitionChanged, UsageInvalid
from northstar.journal import Journal
from northstar.plan.compiler import CompiledRecipe
from northstar.programs.broker import ProgramBroker
from northstar.programs.declaration import load_program
from northstar.programs.recovery import reconcile_program, resume_program
from northstar.results import IterationResult
from northstar.run.execution import RunOutcome, RunRequest, StopSignal
from northstar.run.recovery import ReconcileDecision

__all__ = [
    "is_program",
    "program_compiled",
    "reconcile_program_run",
    "refuse_unsupported",
    "resume_program_run",
    "run_program",
]


def is_program(path: str | Path) -> bool:
    """A ``.py`` file is a program; anything else is read as a recipe."""
    return Path(path).suffix == ".py"


async def run_program(
    request: RunRequest,
    *,
    browser: BrowserSettings | None = None,
    journal_path: str | Path | None = None,
    stop: StopSignal | None = None,
    on_result: Callable[[IterationResult], None] = lambda result: None,
    on_start: Callable[[str], None] = lambda run_id: None,
) -> RunOutcome:
    """Run a program request (``build_request`` with ``load_program``) in a fresh browser."""
    declaration, compiled = load_program(request.recipe_path)
    if compiled.recipe_hash != request.compiled.recipe_hash:
        raise DefinitionChanged(f"the program {request.recipe_path} changed while it was checked")
    with Journal.open(journal_path) as journal:
        async with open_host(browser or BrowserSettings()) as host:
            broker = ProgramBroker(
                request, declaration, host=host, journal=journal, stop=stop, on_result=on_result
            )
            return await broker.run(on_start)


# Run options a program does not take yet, and why: one lane, a fresh context per iteration.
_NOT_YET = {
    "concurrency": "--concurrency (programs run one iteration at a time)",
    "keep_context": "--keep-context (each iteration gets a fresh context)",
    "monitor": "--monitor (a program's calls are not monitored)",
}


def refuse_unsupported(options: Mapping[str, Any]) -> None:
    """``USAGE_INVALID`` for a run option programs do not take yet (nothing is started)."""
    for name, words in _NOT_YET.items():
        if options.get(name) not in (None, False, 0, 1):
            raise UsageInvalid(f"{words} is not available for programs yet", fix="Run without it.")


def program_compiled(path: str | Path) -> CompiledRecipe:
    """A program's declaration as the run engine sees it (for ``run`` and ``validate``)."""
    return load_program(path)[1]


async def reconcile_program_run(
    run_id: str,
    credential: str | None,
    request: RunRequest,
    journal: Journal,
    *,
    browser: BrowserSettings | None = None,
) -> list[ReconcileDecision]:
    """``northstar reconcile`` for a program run: its recorded probes in a fresh browser."""
    async with open_host(browser or BrowserSettings()) as host:
        return await reconcile_program(run_id, credential, request, host=host, journal=journal)


async def resume_program_run(
    run_id: str,
    credential: str | None,
    request: RunRequest,
    journal: Journal,
    *,
    browser: BrowserSettings | None = None,
) -> RunOutcome:
    """``northstar resume`` for a program run: the iterations not verified yet."""
    declaration, _ = load_program(request.recipe_path)
    async with open_host(browser or BrowserSettings()) as host:
        return await resume_program(
            run_id, credential, request, declaration, host=host, journal=journal
        )
