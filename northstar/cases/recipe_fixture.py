"""The ``northstar_recipe`` fixture: a recipe run inside an ordinary Playwright test.

``outputs = await northstar_recipe(page, "recipes/x.yaml", name="Ada")`` with
pytest-playwright-asyncio's ``page``: one iteration runs on the test's own page, context
and browser (``northstar.composition.run_on_page``): the recipe's first tab role with a
start URL is ``page``, other roles and declared popups open in the page's context, and
every role's origins are enforced.

``outputs = northstar_recipe(page, ...)`` (no ``await``) with pytest-playwright's sync
``page``: Playwright's sync and async objects cannot share a page through its public API,
so the iteration runs beside the page instead, in a fresh context of the session's own
Chromium (the one recorded cases replay in, launched with ``browser_type_launch_args``)
that starts from the test context's cookies and local storage (``storage_state``). The
test's page is left where it was.

Either way the verified outputs are returned; an iteration that does not verify fails the
test with ``RecipeNotVerified``, which names the step, what the recipe expected there and
what was found. No journal is written: a fixture run is a check inside a test, and the
test's report is its record. A relative recipe path is taken from pytest's rootdir, and
``{{ base_url }}`` is pytest-playwright's ``--base-url`` unless the call gives ``base_url=``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import pytest

from northstar.browser.settings import BrowserSettings
from northstar.cases.results import explain_failure
from northstar.cases.shared_browser import fixture_or, launch_settings, session_browser

if TYPE_CHECKING:
    from playwright.async_api import Page as AsyncPage
    from playwright.sync_api import Page as SyncPage

    from browser_adapters import PlaywrightHost
    from northstar.browser import BrowserHost
    from northstar.plan.compiler import CompiledRecipe
    from northstar.results import IterationResult

__all__ = ["RecipeNotVerified", "RecipeOnPage", "northstar_recipe"]

Outputs = dict[str, str]


class RecipeNotVerified(AssertionError):
    """The recipe's iteration did not verify; the message says why."""


class RecipeOnPage:
    """Runs a recipe for a test: on an async page, awaitable; beside a sync one, blocking."""

    def __init__(self, request: pytest.FixtureRequest, base_url: str | None) -> None:
        self._request = request
        self._base_url = base_url

    @overload
    def __call__(
        self, page: SyncPage, recipe: str | Path, /, *, base_url: str | None = ..., **params: Any
    ) -> Outputs: ...

    @overload
    def __call__(
        self, page: AsyncPage, recipe: str | Path, /, *, base_url: str | None = ..., **params: Any
    ) -> Coroutine[Any, Any, Outputs]: ...

    def __call__(
        self, page: Any, recipe: str | Path, /, *, base_url: str | None = None, **params: Any
    ) -> Outputs | Coroutine[Any, Any, Outputs]:
        __tracebackhide__ = True
        from playwright.sync_api import Page as SyncPage

        path = self._request.config.rootpath / recipe
        url = base_url or self._base_url
        if isinstance(page, SyncPage):
            return self._beside(page, path, params, url)
        return _on_page(page, path, params, url)

    def _beside(
        self, page: SyncPage, path: Path, params: dict[str, Any], base_url: str | None
    ) -> Outputs:
        """A fresh context of the session's browser, from the sync page's storage state."""
        __tracebackhide__ = True
        with tempfile.TemporaryDirectory(prefix="northstar-state-") as folder:
            state = Path(folder) / "storage-state.json"
            page.context.storage_state(path=state)
            from_state = BrowserSettings(storage_state=str(state))
            return session_browser(self._request.config).run(
                lambda: launch_settings(self._request),
                lambda host: _in_context(host, from_state, path, params, base_url),
            )


async def _on_page(
    page: AsyncPage, path: Path, params: dict[str, Any], base_url: str | None
) -> Outputs:
    __tracebackhide__ = True
    from northstar.composition import run_on_page

    ran = await run_on_page(page, path, params, base_url=base_url)
    return _verified(path, "on the test's page", *ran)


async def _in_context(
    host: PlaywrightHost,
    settings: BrowserSettings,
    path: Path,
    params: dict[str, Any],
    base_url: str | None,
) -> Outputs:
    from northstar.composition import run_once

    view: BrowserHost = host.sharing_browser(settings)
    ran = await run_once(view, path, params, base_url=base_url)
    return _verified(path, "beside the test's page", *ran)


def _verified(path: Path, where: str, compiled: CompiledRecipe, result: IterationResult) -> Outputs:
    __tracebackhide__ = True
    if not result.verified:
        headline = f"recipe {path.name} did not verify {where}"
        raise RecipeNotVerified("\n".join(explain_failure(compiled.recipe, result, headline)))
    return dict(result.outputs)


@pytest.fixture
def northstar_recipe(request: pytest.FixtureRequest) -> RecipeOnPage:
    """Run a recipe for the test's ``page`` and get its verified outputs (see the module)."""
    return RecipeOnPage(request, fixture_or(request, "base_url", None))
