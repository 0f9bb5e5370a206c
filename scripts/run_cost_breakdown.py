"""Where Northstar's CPU per iteration goes: one guarantee switched off at a time.

    PYTHONPATH=. .venv/bin/python scripts/run_cost_breakdown.py ROUNDS ITERATIONS VARIANT...

A measurement, not a test, and not a setting: each variant but ``base`` monkeypatches one
piece away for its own runs (and puts it back), so the pieces can never be switched off
in a real run. Variants: ``base`` (the code as it is), ``no_acted_on`` (the acted-on read
answers without asking the page), ``no_gate`` (the origin gate neither intercepts nor
watches pages), ``no_watch`` (calls are not raced against the browser's going away),
``no_diag`` (no diagnosis baseline), ``no_step_started`` (no journal record of a step's
start), ``new_context`` (a new context per iteration instead of a reset one), ``no_reset``
(the reused context is not reset: no isolation between iterations), and the
baselines ``fresh``, ``reuse_css``, ``reuse_semantic`` (the hand-written scripts of
``northstar.bench``).

Every variant runs ITERATIONS iterations of ``recipes/contact-form.yaml`` once per round,
in a rotating order, through ``northstar.bench``'s measurement (wall, this process's
CPU, the whole tree's CPU with Chromium's orphaned processes reaped); the medians per
iteration are printed with their difference from the first variant.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fixtures.handwritten.launch import discover
from fixtures.site_process import SiteProcess
from northstar.bench._recipe_runs import BASELINES, Timed, measure
from northstar.bench.run_bench import Bench, BenchConfig
from northstar.logs import configure_logging


def _patches(name: str) -> list[tuple[Any, str, Any]]:
    """(object, attribute, replacement) for a variant; empty for ``base`` and baselines."""
    import browser_adapters.session as session
    from browser_adapters.acted_on import ActedOn
    from browser_adapters.browser_watch import BrowserWatch
    from browser_adapters.context_reset import ReusableContext
    from browser_adapters.host import PlaywrightHost
    from browser_adapters.origin_gate import OriginGate
    from northstar.run.diagnosis import StepDiagnosis
    from northstar.run.recorder import JournalRecorder

    async def described(*_: Any, **__: Any) -> ActedOn:
        return ActedOn("button", "x", "button", visible=True)

    async def gate_open(cls: type[OriginGate], browser: Any) -> OriginGate:
        return cls(await browser.new_browser_cdp_session())

    async def nothing(*_: Any, **__: Any) -> None:
        return None

    async def unraced(_: BrowserWatch, work: Any, **__: Any) -> Any:
        return await asyncio.ensure_future(work)

    return {
        "no_acted_on": [(session, "describe_acted_on", described)],
        "no_gate": [(OriginGate, "open", classmethod(gate_open)), (OriginGate, "watch", nothing)],
        "no_watch": [(BrowserWatch, "call", unraced)],
        "no_diag": [(StepDiagnosis, "before_step", nothing)],
        "no_step_started": [(JournalRecorder, "step_started", lambda *_: None)],
        # Not a piece off: the setting ``context_reset`` off (a new context per iteration).
        "new_context": [(PlaywrightHost, "_reuses_contexts", lambda _: False)],
        # The reused context is not reset at all: what the isolation between iterations costs.
        "no_reset": [(ReusableContext, "reset", nothing)],
    }.get(name, [])


@contextlib.contextmanager
def _patched(patches: list[tuple[Any, str, Any]]) -> Iterator[None]:
    """Each ``(object, attribute, value)`` set for the block, and put back after it."""
    saved = [(obj, attr, vars(obj)[attr]) for obj, attr, _ in patches]
    for obj, attr, value in patches:
        setattr(obj, attr, value)
    try:
        yield
    finally:
        for obj, attr, value in saved:
            setattr(obj, attr, value)


def _applied(name: str) -> contextlib.AbstractContextManager[None]:
    return _patched(_patches(name))


async def _measured(bench: Bench, name: str, iterations: int) -> Timed:
    with _applied(name):
        return await measure(bench, name if name in BASELINES else "northstar", iterations)


async def main(rounds: int, iterations: int, variants: list[str]) -> None:
    config = BenchConfig(iterations, rounds, 1, 1, 1, only_runs=True)
    with SiteProcess() as site, tempfile.TemporaryDirectory() as folder:
        bench = Bench(config, site, Path(folder), await discover(None))
        timed: dict[str, list[Timed]] = {name: [] for name in variants}
        for name in variants:  # warm-up
            await _measured(bench, name, 1)
        for number in range(rounds):
            order = variants[number % len(variants) :] + variants[: number % len(variants)]
            for name in reversed(order) if number % 2 else order:
                timed[name].append(await _measured(bench, name, iterations))
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
        _print(timed, iterations)


def _print(timed: dict[str, list[Timed]], iterations: int, against: str = "tree_cpu_s") -> None:
    """Medians per iteration of every variant; ``against``'s change from the first variant."""

    def per_iteration(name: str, figure: str) -> float:
        return float(statistics.median(getattr(t, figure) for t in timed[name])) / iterations * 1000

    first = next(iter(timed))
    for name in timed:
        figures = {f: per_iteration(name, f) for f in ("tree_cpu_s", "cpu_s", "wall_s")}
        change = figures[against] - per_iteration(first, against)
        shown = {
            f: f"{v:6.1f}" + (f" ({change:+6.1f})" if f == against else "")
            for f, v in figures.items()
        }
        print(
            f"{name:22s} tree CPU {shown['tree_cpu_s']}  Python CPU {shown['cpu_s']}"
            f"  wall {shown['wall_s']} ms per iteration"
        )


if __name__ == "__main__":
    configure_logging()
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]))
