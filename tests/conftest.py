"""Shared fixtures: the fixture site on 127.0.0.1 and one headless Chromium per test session.

Browser tests use the real Playwright adapter against the project's own pages; nothing
here reaches the internet. The site and the browser are started once per session and
stopped by these fixtures; ``site.reset()`` runs before each test that uses the site.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import structlog

from fixtures.site_server import FixtureSite
from northstar.plan.compiler import bind, prepare
from northstar.plan.model import Plan
from northstar.recipe.loader import parse_recipe
from northstar.recipe.params import coerce_params

REPO = Path(__file__).resolve().parent.parent
RECIPES = REPO / "recipes"


@pytest.fixture(autouse=True)
def plain_structlog() -> Iterator[None]:
    """Each test starts from structlog's defaults: a CLI run in-process may configure it."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="session")
def site_server() -> Iterator[FixtureSite]:
    with FixtureSite() as site:
        yield site


@pytest.fixture
def site(site_server: FixtureSite) -> FixtureSite:
    """The fixture site with its counters, sessions and faults cleared."""
    site_server.reset()
    return site_server


@pytest.fixture(scope="session")
def other_server() -> Iterator[Any]:
    """A second loopback origin that counts the requests it is asked (the fences' tests)."""
    from fixtures.other_origin import OtherOrigin

    with OtherOrigin() as server:
        yield server


@pytest.fixture
def other(other_server: Any) -> Any:
    """The other origin with its count cleared."""
    other_server.reset()
    return other_server


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """One throwaway Postgres cluster for the session.

    ``scripts/setup.sh`` installs Postgres and psycopg, so a machine without them fails
    these tests with the reason instead of passing them by skipping.
    """
    from fixtures.postgres_server import PostgresServer, postgres_missing_reason

    reason = postgres_missing_reason()
    if reason is not None:
        pytest.fail(f"{reason}: run scripts/setup.sh")
    with PostgresServer() as server:
        yield server


@pytest.fixture(scope="session")
async def host() -> AsyncIterator[Any]:
    """One real headless Chromium for the whole session (a fresh context per iteration)."""
    from browser_adapters import PlaywrightHost
    from northstar.browser.settings import BrowserSettings

    async with PlaywrightHost(BrowserSettings()) as started:
        yield started


def make_plan(
    recipe_text: str,
    params: Mapping[str, Any] | None = None,
    *,
    base_url: str | None = None,
    iteration: int = 1,
    source: str = "<test>",
    files_dirs: tuple[str, ...] = (),
) -> Plan:
    """Parse, check and bind a recipe written inline in a test (its files come from
    ``files_dirs``: a recipe from no file has no folder of its own)."""
    compiled = prepare(parse_recipe(recipe_text, source=source), source=source)
    compiled = replace(compiled, files_dirs=files_dirs)
    values = coerce_params(compiled.recipe.params, params or {})
    return bind(compiled, values, base_url=base_url, iteration=iteration)
