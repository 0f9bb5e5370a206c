"""The measured runs of section (a): Northstar and three hand-written scripts, same work.

Each side runs N iterations of ``recipes/contact-form.yaml``'s work in this process, with
its own browser launched and closed inside the measurement, and is timed three ways:

- wall time;
- this process's CPU (``time.process_time``): Northstar's worker or the script, in Python;
- the whole process tree's CPU: this process plus every child it reaped during the run
  (``getrusage`` of self and children). The Playwright driver is this process's child and
  Chromium's processes are the driver's, each reaped by its parent when the run closes its
  browser, so the tree figure holds the driver's and the browser's work too. The fixture
  site runs in a process that lives through the whole suite, so it is never counted.
  Chromium's processes that outlive their browser are reparented to the bench (a child
  subreaper) and reaped inside the measurement (``_reaping``).

The sides:

- ``northstar``: ``run_recipe``, as ``northstar run`` builds it (a fresh context per
  iteration, the journal, evidence, the origin gate);
- ``fresh``: ``fixtures.handwritten.contact_form``, a fresh context per iteration and the
  recipe's semantic locators;
- ``reuse_css``: ``fixtures.handwritten.contact_form_reuse``, one page for the whole loop
  and css ids: the script people usually write;
- ``reuse_semantic``: the same loop on one page with the recipe's semantic locators.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from northstar.bench._reaping import become_subreaper, children, reap_orphans
from northstar.bench._workload import SENDER, BenchFailed, recipe_request
from northstar.browser.settings import BrowserSettings
from northstar.composition import run_recipe

if TYPE_CHECKING:
    from fixtures.site_process import SiteProcess as Site
    from northstar.bench.run_bench import Bench

__all__ = ["BASELINES", "SIDES", "Timed", "measure", "rotation", "timed"]

SIDES = ("northstar", "fresh", "reuse_css", "reuse_semantic")
BASELINES = SIDES[1:]


@dataclass(frozen=True)
class Timed:
    """One measured run: wall time, this process's CPU, and the whole tree's CPU (s)."""

    wall_s: float
    cpu_s: float
    tree_cpu_s: float


def _tree_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


async def timed(work: Callable[[], Awaitable[object]]) -> Timed:
    """Wall, this process's CPU and the whole tree's CPU while ``work`` runs."""
    become_subreaper()  # so Chromium's orphaned processes count too (see _reaping)
    keep = children()  # the fixture site and anything else that outlives the run
    wall, cpu, tree = time.perf_counter(), time.process_time(), _tree_cpu()
    await work()
    reap_orphans(keep)
    return Timed(time.perf_counter() - wall, time.process_time() - cpu, _tree_cpu() - tree)


def _check_submitted(site: Site, before: int, iterations: int, who: str) -> None:
    received = site.submission_count("contact") - before
    if received != iterations:
        raise BenchFailed(f"{who}: the site received {received} of {iterations} submissions")


async def _northstar(bench: Bench, iterations: int) -> None:
    request = recipe_request(bench.site.base_url, iterations)
    settings = BrowserSettings(executable=bench.config.browser)
    journal = bench.scratch("northstar") / "journal.db"
    outcome = await run_recipe(request, browser=settings, journal_path=journal)
    if outcome.status != "verified":
        raise BenchFailed(f"the Northstar run ended {outcome.status}: {outcome.error}")


async def _fresh(bench: Bench, iterations: int) -> None:
    from fixtures.handwritten.contact_form import ContactForm, run_contact_form

    form = ContactForm(name=SENDER)
    await run_contact_form(
        bench.site.base_url, form, iterations=iterations, executable=bench.executable
    )


def _reusing(locators: str) -> Callable[[Bench, int], Awaitable[None]]:
    async def run(bench: Bench, iterations: int) -> None:
        from fixtures.handwritten.contact_form import ContactForm
        from fixtures.handwritten.contact_form_reuse import run_contact_form_reusing_page

        await run_contact_form_reusing_page(
            bench.site.base_url,
            ContactForm(name=SENDER),
            iterations=iterations,
            locators=locators,
            executable=bench.executable,
        )

    return run


_RUNS: dict[str, Callable[[Bench, int], Awaitable[None]]] = {
    "northstar": _northstar,
    "fresh": _fresh,
    "reuse_css": _reusing("css"),
    "reuse_semantic": _reusing("semantic"),
}


async def measure(bench: Bench, side: str, iterations: int) -> Timed:
    """One side running ``iterations`` iterations; each must reach the server."""
    before = bench.site.submission_count("contact")
    measured = await timed(lambda: _RUNS[side](bench, iterations))
    _check_submitted(bench.site, before, iterations, side)
    return measured


def rotation(round_number: int, sides: tuple[str, ...] = SIDES) -> tuple[str, ...]:
    """The order of the sides in one round: each side leads once in turn, then reversed.

    A drift in machine speed during a round then favours no side over the rounds.
    """
    shift = (round_number - 1) % len(sides)
    order = sides[shift:] + sides[:shift]
    return order if round_number % 2 else tuple(reversed(order))
