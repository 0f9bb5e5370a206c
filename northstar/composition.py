"""The composition root: the one public entry that wires the Playwright adapter in.

Everything else in ``northstar`` depends on the ``northstar.browser`` protocol only; this
module (and the CLI that calls it) is where ``browser_adapters`` is imported, lazily, so
``import northstar`` never loads Playwright.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from northstar.browser.settings import BrowserSettings
from northstar.journal import Journal
from northstar.journal.paths import run_artifacts_dir
from northstar.logs import secret_values
from northstar.plan.compiler import CompiledRecipe, bind, prepare
from northstar.recipe.loader import load_recipe_positions
from northstar.recipe.params import coerce_params
from northstar.results import IterationResult
from northstar.run.execution import RunOutcome, RunRequest, StopSignal, execute_run
from northstar.run.runner import ProgramRunner

if TYPE_CHECKING:
    from northstar.browser import BrowserHost
    from northstar.browser.hooks import IterationHooks
    from northstar.run.recovery import ReconcileDecision

__all__ = [
    "CREDENTIAL_ENV",
    "BrowserSettings",
    "element_roles",
    "load_compiled",
    "open_host",
    "reconcile",
    "recorder_browser",
    "resolve_credential",
    "resume",
    "run_on_page",
    "run_once",
    "run_options",
    "run_recipe",
    "save_signed_in_state",
]


def open_host(settings: BrowserSettings) -> BrowserHost:
    """A Playwright host for ``settings``; use it as ``async with``."""
    from browser_adapters import PlaywrightHost

    return PlaywrightHost(settings)


@asynccontextmanager
async def _host_for(
    open_one: BrowserHost | None, settings: BrowserSettings | None
) -> AsyncIterator[BrowserHost]:
    """``open_one`` as it is (a server's one browser: it stays open), else a fresh host."""
    if open_one is not None:
        yield open_one
        return
    async with open_host(settings or BrowserSettings()) as host:
        yield host


def load_compiled(path: str | Path) -> CompiledRecipe:
    """Load, validate and prepare a recipe file: every static check before any browser."""
    recipe, positions = load_recipe_positions(path)
    return prepare(recipe, source=str(path), positions=positions)


async def run_recipe(
    request: RunRequest,
    *,
    browser: BrowserSettings | None = None,
    journal_path: str | Path | None = None,
    stop: StopSignal | None = None,
    on_result: Callable[[IterationResult], None] = lambda result: None,
    on_start: Callable[[str], None] = lambda run_id: None,
    host: BrowserHost | None = None,
    hooks: IterationHooks | None = None,
) -> RunOutcome:
    """Run a validated request with a journal and one browser for all its iterations.

    ``host``: an open host to run on (a server's one browser), left open afterwards;
    without it the run launches its own browser and closes it at the end. ``hooks``: step
    events for the caller (the CLI's progress line), after the host's own hooks.
    """
    with Journal.open(journal_path) as journal:
        async with _host_for(host, browser) as host:
            return await execute_run(
                request,
                host=host,
                journal=journal,
                stop=stop,
                on_result=on_result,
                on_start=on_start,
                hooks=hooks,
            )


async def save_signed_in_state(
    request: RunRequest,
    save_to: Path,
    *,
    browser: BrowserSettings,
    by_hand: bool,
    wait_ms: int,
) -> None:
    """``northstar sign-in``: the recipe's setup (or a person, headed) signs in; the state
    is saved to ``save_to`` with mode 0600. No journal: nothing is submitted."""
    from northstar.errors import UsageInvalid
    from northstar.run.signin import SignInPlans, save_sign_in

    plans = SignInPlans.of(request.compiled, request.row_for(1), request.base_url)
    if plans is None:
        raise UsageInvalid(
            "the recipe has no `setup` or `signed_in`: there is no sign-in to save",
            fix="Add `setup:` steps that sign in and `signed_in:` checks that prove it.",
        )
    async with open_host(browser) as host:
        token = secret_values.set(
            frozenset().union(*(p.secrets for p in (plans.setup, plans.check) if p))
        )
        try:
            await save_sign_in(host, plans, save_to, by_hand=by_hand, wait_ms=wait_ms)
        finally:
            secret_values.reset(token)


async def run_on_page(
    page: Any, recipe_path: str | Path, params: Mapping[str, Any], *, base_url: str | None = None
) -> tuple[CompiledRecipe, IterationResult]:
    """One iteration of a recipe on a Playwright ``page`` someone else opened (a test's).

    The recipe's first tab role is ``page``; the browser, context and page stay the
    caller's. No journal: this is a check inside a test, whose report is the record.
    """
    from browser_adapters.page_host import PageHost

    async with PageHost(page) as host:
        return await run_once(host, recipe_path, params, base_url=base_url)


async def run_once(
    host: BrowserHost,
    recipe_path: str | Path,
    params: Mapping[str, Any],
    *,
    base_url: str | None = None,
) -> tuple[CompiledRecipe, IterationResult]:
    """One iteration of a recipe on an open host, with no journal (a check inside a test)."""
    compiled = load_compiled(recipe_path)
    values = coerce_params(compiled.recipe.params, params, recipe_dir=Path(recipe_path).parent)
    plan = bind(compiled, values, base_url=base_url)
    token = secret_values.set(plan.secrets)
    try:
        return compiled, await ProgramRunner(host).run_iteration(plan)
    finally:
        secret_values.reset(token)


async def element_roles(
    url: str, selectors: Sequence[str], settings: BrowserSettings
) -> dict[str, tuple[str, str]]:
    """The ARIA role and name of the one element each CSS selector matches at ``url``
    (``northstar lint --live``); selectors matching none, several or no nameable element
    are left out."""
    from browser_adapters import PlaywrightHost
    from browser_adapters.accessibility import roles_by_css

    async with PlaywrightHost(settings) as host:
        return await roles_by_css(host.browser, url, selectors)


CREDENTIAL_ENV = "NORTHSTAR_RUN_CREDENTIAL"


def resolve_credential(journal: Journal, run_id: str, explicit: str | None) -> str | None:
    """``--credential``, then ``$NORTHSTAR_RUN_CREDENTIAL``, then the run's credential file."""
    if explicit:
        return explicit
    if os.environ.get(CREDENTIAL_ENV):
        return os.environ[CREDENTIAL_ENV]
    file = run_artifacts_dir(journal.path, run_id) / "credential"
    return file.read_text().strip() if file.is_file() else None


def run_options(journal: Journal, run_id: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded run's options (recipe, count, base URL, lanes, profile), given ones winning."""
    record = journal.run_record(run_id)
    return {
        **given,
        "recipe": record.recipe_path,
        "repeat": record.total_iterations,
        "interval": record.options.get("interval_s", 0),
        "base_url": given.get("base_url") or record.options.get("base_url"),
        "concurrency": given.get("concurrency") or record.options.get("concurrency", 1),
        "fail_fast": given.get("fail_fast") or record.options.get("fail_fast", False),
        "keep_context": given.get("keep_context") or record.options.get("keep_context", False),
        "probe_control_every": record.options.get("probe_control_every", 0),
        "project": record.project,
        "profile": given.get("profile") or record.profile or None,
    }


async def reconcile(
    run_id: str,
    credential: str | None,
    request: RunRequest,
    journal: Journal,
    *,
    browser: BrowserSettings | None = None,
    host: BrowserHost | None = None,
) -> list[ReconcileDecision]:
    """Run the reconcile probes of a blocked run in a fresh browser (or on ``host``)."""
    from northstar.run.recovery import reconcile_run  # only recovery commands need it

    async with _host_for(host, browser) as host:
        return await reconcile_run(run_id, credential, request, host=host, journal=journal)


async def resume(
    run_id: str,
    credential: str | None,
    request: RunRequest,
    journal: Journal,
    *,
    browser: BrowserSettings | None = None,
    stop: StopSignal | None = None,
    on_result: Callable[[IterationResult], None] = lambda result: None,
    host: BrowserHost | None = None,
) -> RunOutcome:
    """Continue a run's remaining iterations once every outcome is settled (on ``host``)."""
    from northstar.run.recovery import resume_run

    async with _host_for(host, browser) as host:
        return await resume_run(
            run_id, credential, request, host=host, journal=journal, stop=stop, on_result=on_result
        )


def recorder_browser(explicit: str | None) -> str | None:
    """The Chromium for Playwright's recorder (headed): ``None`` means Playwright's own build."""
    import asyncio

    from playwright.async_api import async_playwright

    from browser_adapters.discovery import BROWSER_ENV, find_browser

    async def own_build() -> str:
        async with async_playwright() as playwright:
            return playwright.chromium.executable_path

    given = explicit or os.environ.get(BROWSER_ENV)  # wins over discovery: no driver start
    build = None if given else asyncio.run(own_build())
    return find_browser(explicit, headless=False, playwright_build=build)
