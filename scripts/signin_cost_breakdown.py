"""Where the time of a signed-in batch goes: setup once, login each time, the one-page script.

    PYTHONPATH=. .venv/bin/python scripts/signin_cost_breakdown.py ROUNDS ITERATIONS VARIANT...

A measurement, not a test. Every variant saves ITERATIONS notes in the fixture site's
login-walled members area (``recipes/members-note.yaml``'s work) once per round, in a
rotating order, timed as ``northstar.bench`` times its runs (wall, this process's CPU,
the whole tree's CPU); the medians per iteration are printed with their difference from
the first variant, and every run must have saved all its notes.

Variants: ``setup`` (``members-note.yaml``: ``setup`` signs in once per lane),
``login_each`` (``members-note-login-each.yaml``: the same steps logging in every
iteration), ``once_script`` (``fixtures.handwritten.members_note_once``: signs in once and
keeps one page), ``setup_keep`` (``setup`` with ``--keep-context``), and ``setup`` with one
piece switched off, written ``setup:PIECE``: ``no_check`` (the ``signed_in`` check before
each iteration is skipped) or any piece of ``scripts/run_cost_breakdown.py``
(``no_acted_on``, ``no_gate``, ``no_watch``, ``no_diag``, ``no_step_started``,
``new_context``, ``no_reset``), or one part of the reset between iterations:
``no_origin_clear`` (no ``Storage.clearDataForOrigin``), ``no_cache_clear`` (no
``Network.clearBrowserCache``). A piece is monkeypatched away for its own runs only.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fixtures._site_routes import DEMO_PASSWORD
from fixtures.handwritten.launch import discover
from fixtures.site_process import SiteProcess
from northstar.bench._recipe_runs import Timed, timed
from northstar.bench._workload import REPO, BenchFailed
from northstar.browser.settings import BrowserSettings
from northstar.composition import load_compiled, run_recipe
from northstar.logs import configure_logging
from northstar.recipe.params import coerce_params
from northstar.run.execution import RunRequest
from northstar.run.repeat import RepeatOptions
from scripts.run_cost_breakdown import _applied, _patched, _print

RECIPES = {"setup": "members-note.yaml", "login_each": "members-note-login-each.yaml"}
_titles = itertools.count(1)


def _reset_patches(piece: str) -> list[tuple[Any, str, Any]]:
    """The parts of a context reset, one at a time (see ``browser_adapters.context_reset``)."""
    from playwright.async_api import CDPSession

    from browser_adapters.context_reset import ReusableContext

    async def nothing(*_: Any, **__: Any) -> None:
        return None

    send = CDPSession.send

    async def keep_cache(self: CDPSession, method: str, params: Any = None) -> Any:
        if method == "Network.clearBrowserCache":
            return None
        return await send(self, method, params)  # type: ignore[arg-type]

    return {
        "no_origin_clear": [(ReusableContext, "_clear_origin", staticmethod(nothing))],
        "no_cache_clear": [(CDPSession, "send", keep_cache)],
    }.get(piece, [])


@contextlib.contextmanager
def _piece_off(piece: str) -> Iterator[None]:
    patches = _reset_patches(piece)
    if patches:
        with _patched(patches):
            yield
        return
    if piece != "no_check":
        with _applied(piece):
            yield
        return
    from northstar.run.signin import LaneSignIn

    async def holds(*_: Any) -> bool:
        return True

    saved = LaneSignIn._holds_in
    LaneSignIn._holds_in = holds  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        LaneSignIn._holds_in = saved  # type: ignore[method-assign]


def _request(recipe: Path, base_url: str, iterations: int, keep: bool) -> RunRequest:
    compiled = load_compiled(recipe)
    rows = [
        coerce_params(
            compiled.recipe.params,
            {"title": f"Bench note {next(_titles)}", "password": DEMO_PASSWORD},
            recipe_dir=recipe.parent,
        )
        for _ in range(iterations)
    ]
    return RunRequest(
        recipe_path=recipe,
        compiled=compiled,
        rows=rows,
        repeat=RepeatOptions.of(iterations, 0),
        base_url=base_url,
        project="bench",
        keep_context=keep,
    )


async def _northstar(site: SiteProcess, work: Path, variant: str, iterations: int) -> None:
    side, _, piece = variant.partition(":")
    keep = side == "setup_keep"
    recipe = REPO / "recipes" / RECIPES["setup" if keep else side]
    request = _request(recipe, site.base_url, iterations, keep)
    journal = Path(tempfile.mkdtemp(dir=work)) / "journal.db"
    with _piece_off(piece) if piece else contextlib.nullcontext():
        outcome = await run_recipe(request, browser=BrowserSettings(), journal_path=journal)
    if outcome.status != "verified":
        raise BenchFailed(f"{variant}: the run ended {outcome.status}: {outcome.error}")


async def _measured(site: SiteProcess, work: Path, variant: str, iterations: int) -> Timed:
    before = site.submission_count("note")
    if variant == "once_script":
        from fixtures.handwritten.members_note_once import run_members_note_once

        executable = await discover(None)
        measured = await timed(
            lambda: run_members_note_once(
                site.base_url, DEMO_PASSWORD, iterations=iterations, executable=executable
            )
        )
    else:
        measured = await timed(lambda: _northstar(site, work, variant, iterations))
    saved = site.submission_count("note") - before
    if saved != iterations:
        raise BenchFailed(f"{variant}: {saved} of {iterations} notes saved")
    return measured


async def main(rounds: int, iterations: int, variants: list[str]) -> None:
    with SiteProcess() as site, tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        timed: dict[str, list[Timed]] = {name: [] for name in variants}
        for name in variants:  # warm-up
            await _measured(site, work, name, 1)
        for number in range(rounds):
            order = variants[number % len(variants) :] + variants[: number % len(variants)]
            for name in reversed(order) if number % 2 else order:
                timed[name].append(await _measured(site, work, name, iterations))
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")
        _print(timed, iterations, against="wall_s")


if __name__ == "__main__":
    configure_logging()
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]))
