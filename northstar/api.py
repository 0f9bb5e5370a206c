"""The Python API: run a recipe from a script with the CLI's guarantees and journal.

``await northstar.run(...)`` builds the same ``RunRequest`` that ``northstar run`` builds
(every row and option checked before any browser starts) and hands it to the composition
root's ``run_recipe``: the same journal, binding, at-most-once submissions and verdicts.
``northstar.run_sync(...)`` drives that one coroutine on a fresh event loop for plain
scripts; it is not a second implementation. ``northstar.load(...)`` validates a recipe
without running it.

The API never prints and never configures logging output: Northstar's log events go to
the standard library logger ``northstar`` (which has only a ``NullHandler``), unless the
program configured structlog itself, in which case its configuration is used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from northstar.browser.settings import BrowserSettings
from northstar.composition import load_compiled, run_recipe
from northstar.errors import EventLoopRunning, NorthstarError
from northstar.journal.paths import resolve_journal
from northstar.logs import library_logging
from northstar.plan.compiler import CompiledRecipe
from northstar.readers.endings import RunEnding, read_ending
from northstar.results import IterationResult
from northstar.run.execution import RunOutcome, RunRequest, StopSignal
from northstar.run.requests import RunInputs, build_run_request

__all__ = ["RunResult", "load", "run", "run_sync"]

Params = Mapping[str, Any] | Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class RunResult:
    """What a run did, as recorded in the journal.

    ``ending`` is the run's ending as the journal holds it (``northstar.readers.endings``:
    the same facts ``northstar run`` prints and ``northstar show --json`` reads): its
    ``status``, ``verified``/``recorded``/``total`` counts, the stop reason's ``code``
    and message with its iteration, step, file or URL, the ``exit_code`` the CLI would
    end with and ``next_command()``. ``state`` is that status: ``verified`` (every
    requested iteration verified), ``failed``, ``needs_review``, ``blocked`` (an unknown
    outcome: reconcile, then resume) or ``stopped``. ``iterations`` holds the results this
    process kept, in order, with their ``outputs`` and step results. ``credential`` is
    what ``northstar reconcile``/``resume`` ask for; it is kept out of ``repr`` so
    printing a result never shows it.
    """

    run_id: str
    ending: RunEnding
    iterations: tuple[IterationResult, ...]
    journal: Path | str
    error: NorthstarError | None = None
    artifacts: Path | None = None
    credential: str = field(default="", repr=False)

    @property
    def state(self) -> str:
        return self.ending.status

    @property
    def requested(self) -> int:
        return self.ending.total

    @property
    def verified(self) -> bool:
        """True only if every requested iteration verified."""
        return self.state == "verified"

    @property
    def outputs(self) -> list[tuple[int, str, str]]:
        """``(iteration, name, value)`` for every output of every verified iteration kept."""
        return [
            (result.iteration, name, value)
            for result in self.iterations
            if result.verified
            for name, value in result.outputs.items()
        ]


def load(recipe: str | Path) -> CompiledRecipe:
    """Load and validate a recipe file: every static check, no browser (``RECIPE_INVALID``)."""
    return load_compiled(recipe)


async def run(
    recipe: str | Path,
    *,
    params: Params | None = None,
    repeat: int | None = None,
    interval: int = 0,
    journal: str | Path | None = None,
    base_url: str | None = None,
    project: str = "default",
    profile: str | Path | None = None,
    concurrency: int = 1,
    fail_fast: bool = False,
    keep_context: bool = False,
    monitor: bool = False,
    browser: BrowserSettings | None = None,
    cdp_url: str | None = None,
    ws_endpoint: str | None = None,
    stop: StopSignal | None = None,
    files_dirs: Sequence[str | Path] = (),
) -> RunResult:
    """Run ``recipe`` and verify every iteration, as ``northstar run`` does.

    ``params``: one mapping (the same values for every iteration, ``repeat`` times) or a
    list of mappings (one iteration per row). ``browser`` describes the launch
    (executable, headless, ...); ``cdp_url``/``ws_endpoint`` connect to a remote browser
    instead. ``files_dirs``: folders uploads may come from besides the recipe's own (the
    CLI's ``--files-dir``). Bad input raises its ``NorthstarError`` before any browser starts; a run
    that starts returns a ``RunResult`` whatever its state (check ``.verified``).
    """
    library_logging()
    request = build_request(
        Path(recipe),
        params,
        repeat=repeat,
        interval=interval,
        base_url=base_url,
        project=project,
        profile=profile,
        lanes=(concurrency, fail_fast, keep_context, monitor),
        files_dirs=files_dirs,
    )
    base = browser or BrowserSettings()
    settings = replace(
        base,
        cdp_url=cdp_url or base.cdp_url,
        ws_endpoint=ws_endpoint or base.ws_endpoint,
        storage_state=base.storage_state or request.profile,
    )
    outcome = await run_recipe(request, browser=settings, journal_path=journal, stop=stop)
    return run_result(outcome, resolve_journal(journal))


def run_sync(recipe: str | Path, **options: Any) -> RunResult:
    """``run`` for plain scripts: runs it on a new event loop and returns its result.

    Refused with ``EVENT_LOOP_RUNNING`` inside a running event loop (a notebook, an async
    program): blocking that loop would stall it, so ``await northstar.run(...)`` there.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        from northstar._early_start import run_on_loop  # the CLI's loop for Playwright's driver

        return run_on_loop(run(recipe, **options))
    raise EventLoopRunning("northstar.run_sync was called inside a running event loop")


def build_request(
    recipe: Path,
    params: Params | None,
    *,
    repeat: int | None,
    interval: int,
    base_url: str | None,
    project: str,
    profile: str | Path | None,
    lanes: tuple[int, bool, bool, bool],
    files_dirs: Sequence[str | Path] = (),
) -> RunRequest:
    """The CLI's checks, by the one request builder: recipe, every row (bound once), bounds.

    ``params``: one mapping (constant, ``repeat`` times) or a list of mappings (one row
    per iteration; ``repeat``, if given, must be their number).
    """
    compiled = load_compiled(recipe)
    rows = None if params is None or isinstance(params, Mapping) else list(params)
    inputs = RunInputs(
        params=dict(params) if isinstance(params, Mapping) else {},
        rows=rows,
        repeat=repeat,
        interval=interval,
        base_url=base_url,
        files_dirs=tuple(str(Path(folder).resolve()) for folder in files_dirs),
    )
    concurrency, fail_fast, keep_context, monitor = lanes
    return build_run_request(
        recipe,
        compiled,
        inputs,
        project=project,
        profile=str(Path(profile).resolve()) if profile else None,
        concurrency=concurrency,
        fail_fast=fail_fast,
        keep_context=keep_context,
        monitor=monitor,
    )


def run_result(outcome: RunOutcome, journal: Path | str) -> RunResult:
    """The public view of a run's outcome: its ending read back from the journal."""
    return RunResult(
        run_id=outcome.run_id,
        ending=read_ending(journal, outcome.run_id),
        iterations=tuple(outcome.results),
        journal=journal,
        error=outcome.error,
        artifacts=outcome.artifacts,
        credential=outcome.credential,
    )
