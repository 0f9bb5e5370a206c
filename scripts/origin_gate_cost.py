"""What the origin gate costs: per watched page, per document request, per iteration.

    PYTHONPATH=. .venv/bin/python scripts/origin_gate_cost.py [ITERATIONS]

A measurement, not a test: it prints medians and asserts nothing. The fixture site runs in
a process of its own. Per iteration, the contact-form recipe runs with the gate on and off
in alternation (off: no page watched and the browser's interception disabled), and the
paired difference of adjacent iterations is reported, as single iterations vary by more.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog

from browser_adapters import BrowserOptions, PlaywrightHost
from browser_adapters.origin_gate import OriginGate, PageGuard
from fixtures.site_process import SiteProcess
from northstar.composition import load_compiled
from northstar.plan.compiler import bind
from northstar.recipe.params import coerce_params
from northstar.run.runner import ProgramRunner

RECIPE = Path("recipes/contact-form.yaml")
DOCUMENTS = {"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}


async def _timed(action: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await action()
    return (time.perf_counter() - started) * 1000


async def per_request(host: PlaywrightHost, base_url: str, rounds: int = 100) -> None:
    """``watch()`` once per page, and a local page load with and without interception."""
    guard = PageGuard(frozenset([base_url]), on_refused=print, on_popup=lambda: guard)
    context = await host.browser.new_context()
    page = await context.new_page()
    watch = [await _timed(lambda: host.gate.watch(context, page, guard))]
    for _ in range(rounds // 4):
        other = await context.new_page()
        watch.append(await _timed(lambda other=other: host.gate.watch(context, other, guard)))
        await other.close()
    loads: dict[bool, list[float]] = {True: [], False: []}
    for number in range(rounds):
        on = number % 2 == 0
        await _interception(host.gate, on=on)
        loads[on].append(await _timed(lambda: page.goto(f"{base_url}/menu")))
    await _interception(host.gate, on=True)
    await context.close()
    print(f"watch() per page: median {statistics.median(watch):.2f} ms")
    on, off = statistics.median(loads[True]), statistics.median(loads[False])
    print(f"page load, gate on / off: {on:.2f} / {off:.2f} ms (one document request each)")


async def _interception(gate: OriginGate, *, on: bool) -> None:
    cdp = gate._cdp  # a measurement may reach inside: the gate itself has no off switch
    await (cdp.send("Fetch.enable", {"patterns": [DOCUMENTS]}) if on else cdp.send("Fetch.disable"))


async def per_iteration(host: PlaywrightHost, base_url: str, count: int) -> None:
    compiled = load_compiled(RECIPE)
    values = coerce_params(compiled.recipe.params, {"name": "Ada"}, recipe_dir=RECIPE.parent)
    runner = ProgramRunner(host)
    walls: dict[bool, list[float]] = {True: [], False: []}
    watch = OriginGate.watch
    for number in range(2 * count + 4):
        on = number % 2 == 0
        OriginGate.watch = watch if on else _no_watch  # type: ignore[method-assign]
        await _interception(host.gate, on=on)
        plan = bind(compiled, values, base_url=base_url, iteration=number + 1)
        started = time.perf_counter()
        result = await runner.run_iteration(plan)
        if number >= 4:  # warm-up
            walls[on].append((time.perf_counter() - started) * 1000)
        assert result.verified, result.reason
    OriginGate.watch = watch  # type: ignore[method-assign]
    await _interception(host.gate, on=True)
    paired = [a - b for a, b in zip(walls[True], walls[False], strict=True)]
    on, off = statistics.median(walls[True]), statistics.median(walls[False])
    print(f"iteration ({RECIPE.name}), gate on / off: {on:.1f} / {off:.1f} ms")
    print(f"paired difference, median of {count}: {statistics.median(paired):+.1f} ms")


async def _no_watch(self: OriginGate, context: Any, page: Any, guard: PageGuard) -> None:
    return None


async def main(count: int) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with SiteProcess() as site:
        async with PlaywrightHost(BrowserOptions()) as host:
            await per_request(host, site.base_url)
            await per_iteration(host, site.base_url, count)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
