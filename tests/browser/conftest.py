"""Helpers for browser tests: inline recipes run through the real runner and adapter.

Every test drives the session's headless Chromium (``host``) against the fixture site
(``site``, reset per test) with ``ProgramRunner(host).run_iteration(plan)``: the same path a
run takes, minus the journal. Negative tests give the failing step a short ``timeout`` so
the suite stays fast; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.composition import load_compiled
from northstar.plan.compiler import bind
from northstar.recipe.params import coerce_params
from northstar.results import IterationResult
from northstar.run.runner import ProgramRunner
from tests.conftest import RECIPES, make_plan

# The timeout of a step that is meant to fail. Playwright retries until then, so it is what a
# negative test costs; the page is opened by an earlier step (see LOADED) with the default.
FAIL_FAST_MS = 400

# The bound of a wait for an event that does come (a page opened or closed, a tab loaded,
# a check that holds): generous, since it costs nothing when the event comes, and a busy
# machine (many tests, two cores) may take seconds for one page.
EVENT_MS = 60_000

# The timeout of a step meant to fail only after the page did something first (navigated
# on its own after a click, and was refused): the failure costs all of it, so it is not
# EVENT_MS, but far more than the page needs, even on a busy machine.
AFTER_PAGE_MS = 5000

# A first step that opens the role's tab with the recipe's (generous) default timeout, so
# a short timeout on the next step bounds only the failing wait, never the page load.
LOADED = """
- id: loaded
  tab: site
  wait_for: {url: "**"}
"""

RunText = Callable[..., Awaitable[IterationResult]]
RunMany = Callable[[Mapping[str, str]], Awaitable[dict[str, IterationResult]]]


def recipe(
    start: str,
    steps: str,
    *,
    params: str = "",
    tail: str = "",
    timeout: int = 5000,
    name: str = "browser-test",
) -> str:
    """A one-tab recipe (role ``site`` opened at ``start``) around the YAML ``steps`` list.

    Every step names ``tab: site``; ``tail`` adds top-level keys (outputs, done_when).
    Tests with several roles write their recipe in full.
    """
    tabs = f'tabs:\n  site:\n    start: "{{{{ base_url }}}}{start}"\n'
    parts = [f"name: {name}\ntimeout: {timeout}\n", tabs]
    if params:
        parts.append("params:\n" + textwrap.indent(textwrap.dedent(params).strip(), "  ") + "\n")
    parts.append("steps:\n" + textwrap.indent(textwrap.dedent(steps).strip(), "  ") + "\n")
    if tail:
        parts.append(textwrap.dedent(tail).strip() + "\n")
    return "".join(parts)


def serialized(result: IterationResult) -> str:
    """The result as the journal and ``--json`` see it."""
    return json.dumps(result.to_dict(), default=str)


def last_step(result: IterationResult) -> Any:
    return result.steps[-1]


@pytest.fixture
def run_text(host: Any, site: FixtureSite) -> RunText:
    """Run a recipe written inline for one iteration against the fixture site."""

    async def run(
        text: str, params: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> IterationResult:
        plan = make_plan(text, params, base_url=site.base_url, **kwargs)
        return await ProgramRunner(host).run_iteration(plan)

    return run


@pytest.fixture
def run_many(host: Any, site: FixtureSite) -> RunMany:
    """Run several inline recipes at once, each in its own context, results by name.

    For many cases that each wait out a short timeout: the waits overlap instead of adding up.
    """

    async def run(texts: Mapping[str, str]) -> dict[str, IterationResult]:
        runner = ProgramRunner(host)
        plans = {name: make_plan(text, base_url=site.base_url) for name, text in texts.items()}
        results = await asyncio.gather(*(runner.run_iteration(p) for p in plans.values()))
        return dict(zip(plans, results, strict=True))

    return run


@pytest.fixture
def run_file(host: Any, site: FixtureSite) -> Callable[..., Awaitable[IterationResult]]:
    """Run a recipe from ``recipes/`` as the CLI does (file params read from its folder)."""

    async def run(name: str, params: Mapping[str, Any] | None = None) -> IterationResult:
        path = RECIPES / name
        compiled = load_compiled(path)
        values = coerce_params(compiled.recipe.params, params or {}, recipe_dir=Path(path).parent)
        plan = bind(compiled, values, base_url=site.base_url)
        return await ProgramRunner(host).run_iteration(plan)

    return run
