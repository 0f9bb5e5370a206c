"""The composition root: the one public entry that wires the Playwright adapter in.

Everything else in ``northstar`` depends on the ``northstar.browser`` protocol only; this
module (and the CLI that calls it) is where ``browser_adapters`` is imported, lazily, so
``import northstar`` never loads Playwright.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from northstar.compiler import CompiledRecipe, bind, prepare
from northstar.execution import RunOutcome, RunRequest, StopSignal, execute_run
from northstar.journal import Journal
from northstar.loader import load_recipe
from northstar.logs import secret_values
from northstar.params import coerce_params
from northstar.results import IterationResult
from northstar.runner import ProgramRunner

if TYPE_CHECKING:
    from northstar.browser import BrowserHost

__all__ = ["BrowserSettings", "load_compiled", "open_host", "run_once", "run_recipe"]


@dataclass(frozen=True)
class BrowserSettings:
    """How the browser is launched; ``executable`` (``--browser``) wins over discovery."""

    executable: str | None = None
    headless: bool = True
    slow_mo_ms: float = 0
    storage_state: str | None = None


def open_host(settings: BrowserSettings) -> BrowserHost:
    """A Playwright host for ``settings``; use it as ``async with``."""
    from browser_adapters import BrowserOptions, PlaywrightHost

    return PlaywrightHost(
        BrowserOptions(
            executable=settings.executable,
            headless=settings.headless,
            slow_mo_ms=settings.slow_mo_ms,
            storage_state=settings.storage_state,
        )
    )


def load_compiled(path: str | Path) -> CompiledRecipe:
    """Load, validate and prepare a recipe file: every static check before any browser."""
    return prepare(load_recipe(path), source=str(path))


async def run_once(
    recipe_path: str | Path,
    params: Mapping[str, Any],
    *,
    base_url: str | None = None,
    browser: BrowserSettings | None = None,
) -> IterationResult:
    """Run one iteration of a recipe in a fresh browser and return its verdict."""
    compiled = load_compiled(recipe_path)
    values = coerce_params(compiled.recipe.params, params, recipe_dir=Path(recipe_path).parent)
    plan = bind(compiled, values, base_url=base_url)
    token = secret_values.set(plan.secrets)
    try:
        async with open_host(browser or BrowserSettings()) as host:
            return await ProgramRunner(host).run_iteration(plan)
    finally:
        secret_values.reset(token)


async def run_recipe(
    request: RunRequest,
    *,
    browser: BrowserSettings | None = None,
    journal_path: str | Path | None = None,
    stop: StopSignal | None = None,
    on_result: Callable[[IterationResult], None] = lambda result: None,
    on_start: Callable[[str], None] = lambda run_id: None,
) -> RunOutcome:
    """Run a validated request with a journal and one browser for all its iterations."""
    with Journal.open(journal_path) as journal:
        async with open_host(browser or BrowserSettings()) as host:
            return await execute_run(
                request,
                host=host,
                journal=journal,
                stop=stop,
                on_result=on_result,
                on_start=on_start,
            )
