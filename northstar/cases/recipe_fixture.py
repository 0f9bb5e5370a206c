"""The ``northstar_recipe`` fixture: a recipe run inside an ordinary Playwright test, on its page.

``outputs = await northstar_recipe(page, "recipes/x.yaml", name="Ada")`` with
pytest-playwright-asyncio's ``page``; ``outputs = northstar_recipe(page, ...)`` (no
``await``) with pytest-playwright's sync ``page``. One iteration runs on the test's own
page, context and browser (``northstar.composition.run_on_page``): the recipe's first tab
role with a start URL is ``page``, other roles and declared popups open in the page's
context, and every role's origins are enforced. The verified outputs are returned; an
iteration that does not verify fails the test with ``RecipeNotVerified``, which names the
step, what the recipe expected there and what was found.

No journal is written: a fixture run is a check inside a test, and the test's report is
its record. A relative recipe path is taken from pytest's rootdir, and ``{{ base_url }}``
is pytest-playwright's ``--base-url`` unless the call gives ``base_url=``.
"""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import pytest

from northstar.cases.results import explain_failure

if TYPE_CHECKING:
    from playwright.async_api import Page as AsyncPage
    from playwright.sync_api import Page as SyncPage

__all__ = ["RecipeNotVerified", "RecipeOnPage", "northstar_recipe"]

Outputs = dict[str, str]


class RecipeNotVerified(AssertionError):
    """The recipe's iteration on the test's page did not verify; the message says why."""


class RecipeOnPage:
    """Runs a recipe on a given page: awaitable for an async page, blocking for a sync one."""

    def __init__(self, root: Path, base_url: str | None) -> None:
        self._root = root
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
        from browser_adapters.sync_bridge import is_sync_page, run_on_sync_page

        path = self._root / recipe
        url = base_url or self._base_url
        if is_sync_page(page):
            return run_on_sync_page(page, lambda twin: _verified(twin, path, params, url))
        return _verified(page, path, params, url)


async def _verified(
    page: AsyncPage, path: Path, params: dict[str, Any], base_url: str | None
) -> Outputs:
    __tracebackhide__ = True
    from northstar.composition import run_on_page

    compiled, result = await run_on_page(page, path, params, base_url=base_url)
    if not result.verified:
        headline = f"recipe {path.name} did not verify on the test's page"
        raise RecipeNotVerified("\n".join(explain_failure(compiled.recipe, result, headline)))
    return dict(result.outputs)


@pytest.fixture
def northstar_recipe(request: pytest.FixtureRequest) -> RecipeOnPage:
    """Run a recipe on the test's ``page`` and get its verified outputs (see the module)."""
    try:
        base_url = request.getfixturevalue("base_url")
    except pytest.FixtureLookupError:  # pytest-playwright is not active
        base_url = None
    return RecipeOnPage(request.config.rootpath, base_url)
