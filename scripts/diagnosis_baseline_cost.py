"""What the diagnosis baselines cost the stored path: per baseline, per iteration, per run.

    PYTHONPATH=. .venv/bin/python scripts/diagnosis_baseline_cost.py [ITERATIONS]

A measurement, not a test: it prints medians and asserts nothing. The contact-form recipe
(7 steps) runs against the fixture site (its own process) with the journal's recorder.
A baseline is taken once per recipe step per run, so only a run's first verified
iteration pays for it; every later iteration asks the journal one cached question per
step. Iterations alternate between "first of a run" (a fresh run id: every step observed
and its baseline written) and "later" (baselines already there), and the paired
difference is reported, as single iterations vary by more.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

import structlog

from browser_adapters import PlaywrightHost
from fixtures.site_process import SiteProcess
from northstar.browser.settings import BrowserSettings
from northstar.composition import load_compiled
from northstar.journal import Journal
from northstar.plan.compiler import bind
from northstar.recipe.params import coerce_params
from northstar.run.recorder import JournalRecorder
from northstar.run.runner import ProgramRunner

RECIPE = Path("recipes/contact-form.yaml")


def _new_run(journal: Journal) -> str:
    run_id, _ = journal.create_run(
        recipe_path=str(RECIPE), recipe_name="contact-form", definition_hash="d",
        project="p", profile="p", params_fingerprint="f", total_iterations=1, options={},
    )  # fmt: skip
    journal.start_iteration(run_id, 1, params_fingerprint="f")
    return run_id


async def per_iteration(host: PlaywrightHost, base_url: str, count: int, journal: Journal) -> None:
    compiled = load_compiled(RECIPE)
    values = coerce_params(compiled.recipe.params, {"name": "Ada"}, recipe_dir=RECIPE.parent)
    walls: dict[bool, list[float]] = {True: [], False: []}
    later_run = _new_run(journal)
    for number in range(2 * count + 4):
        first = number % 2 == 0
        run_id, iteration = (_new_run(journal), 1) if first else (later_run, number + 2)
        if not first:  # a later iteration of the same run: its submission is a new one
            journal.start_iteration(run_id, iteration, params_fingerprint="f")
        runner = ProgramRunner(host, recorder=JournalRecorder(journal, run_id))
        plan = bind(compiled, values, base_url=base_url, iteration=iteration)
        started = time.perf_counter()
        result = await runner.run_iteration(plan)
        if number >= 4:  # warm-up (and the later run's own first iteration)
            walls[first].append((time.perf_counter() - started) * 1000)
        assert result.verified, result.reason
    paired = [a - b for a, b in zip(walls[True], walls[False], strict=True)]
    one, later = statistics.median(walls[True]), statistics.median(walls[False])
    steps = len(compiled.recipe.steps)
    print(f"iteration ({RECIPE.name}, {steps} steps), first of a run / later: "
          f"{one:.1f} / {later:.1f} ms")  # fmt: skip
    print(f"paired difference, median of {count}: {statistics.median(paired):+.1f} ms "
          f"(about {statistics.median(paired) / steps:.1f} ms per baseline)")  # fmt: skip
    size = journal._db.one("SELECT avg(length(observation_json)) FROM step_baselines")
    print(f"baseline size in the journal: {size[0] if size else 0:.0f} bytes on average")


async def main(count: int) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    with (
        tempfile.TemporaryDirectory() as folder,
        Journal.open(Path(folder) / "j.db") as journal,
        SiteProcess() as site,
    ):
        async with PlaywrightHost(BrowserSettings()) as host:
            await per_iteration(host, site.base_url, count, journal)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
