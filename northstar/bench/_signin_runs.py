"""Section (f): signing in once, and keeping one page, as whole processes.

Six commands, each run as a person runs it and timed from spawn to exit:

- ``setup``: ``northstar run recipes/members-note.yaml`` (its ``setup`` signs in once per
  lane; every iteration starts in a fresh context from that signed-in state);
- ``login_each``: the same work with ``recipes/members-note-login-each.yaml``, which signs
  in inside every iteration;
- ``once_script``: ``python -m fixtures.handwritten.members_note_once``, a hand-written
  script that signs in once and keeps one page;
- ``fresh_script``: ``python -m fixtures.handwritten.members_note_fresh``, a hand-written
  script that signs in once and gives every iteration a fresh context made from the saved
  state (Playwright Test's setup project): the same isolation as ``setup``;
- ``keep_context``: ``northstar run recipes/contact-form.yaml --keep-context``;
- ``one_page``: ``python -m fixtures.handwritten.contact_form_reuse`` (one page, css ids).

Each is timed by ``_recipe_runs.timed`` (wall and the whole process tree's CPU: the command,
its Playwright driver and Chromium, all reaped inside the measurement). Before each run
the fixture site forgets what it saw; after it, the site must have saved one note (or
one contact message) per iteration and counted the logins the side claims to make (one,
one per iteration, or none), so a run that failed or skipped its sign-in is never timed.
The ratios of each round and their median and spread are a plain function of the rounds
(``signin_figures``).
"""

from __future__ import annotations

import asyncio
import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from northstar.bench._processes import northstar_program, script_command, wall_seconds
from northstar.bench._recipe_runs import Timed, timed
from northstar.bench._workload import RECIPE, REPO, SENDER, BenchFailed

if TYPE_CHECKING:
    from northstar.bench.run_bench import Bench

__all__ = [
    "COMPARISONS",
    "SIDES_BY_NAME",
    "SIGNIN_SIDES",
    "Side",
    "check_effects",
    "measure_side",
    "signin_figures",
]

MEMBERS = REPO / "recipes" / "members-note.yaml"
MEMBERS_LOGIN_EACH = REPO / "recipes" / "members-note-login-each.yaml"

SIGNIN_SIDES = ("setup", "login_each", "once_script", "fresh_script", "keep_context", "one_page")
# Each ratio: its key, and the side divided by the side it is compared with.
COMPARISONS: Mapping[str, tuple[str, str]] = {
    "login_each": ("setup", "login_each"),
    "once_script": ("setup", "once_script"),
    "fresh_script": ("setup", "fresh_script"),
    "keep_context": ("keep_context", "one_page"),
}


@dataclass(frozen=True)
class Side:
    """One measured command and what the site must have seen after ``iterations`` of it."""

    name: str
    command: Callable[[Bench, int], tuple[list[str], Path]]  # the command and its cwd
    saves: str  # the submission kind each iteration saves
    logins: Callable[[int], int]  # the logins ``iterations`` iterations make


def _titles(folder: Path, iterations: int) -> Path:
    """One row per iteration, titled as the hand-written script titles its notes."""
    rows = ["title", *(f"Note {number}" for number in range(1, iterations + 1))]
    path = folder / "titles.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _northstar(bench: Bench, recipe: Path, extra: Callable[[Path], list[str]]) -> list[str]:
    """``northstar run RECIPE`` on a fresh journal; ``extra`` adds options, given its folder."""
    folder = bench.scratch("signin")
    browser = ["--browser", bench.config.browser] if bench.config.browser else []
    arguments = ["run", str(recipe), "--base-url", bench.site.base_url]
    arguments += ["--journal", str(folder / "journal.db"), *extra(folder), *browser]
    return northstar_program() + arguments


def _members(recipe: Path) -> Callable[[Bench, int], tuple[list[str], Path]]:
    def command(bench: Bench, iterations: int) -> tuple[list[str], Path]:
        def rows(folder: Path) -> list[str]:
            return ["--params-file", str(_titles(folder, iterations))]

        return _northstar(bench, recipe, rows), bench.work

    return command


def _keep_context(bench: Bench, iterations: int) -> tuple[list[str], Path]:
    extra = ["-p", f"name={SENDER}", "--keep-context", "--repeat", str(iterations)]
    return _northstar(bench, RECIPE, lambda _folder: extra), bench.work


def _script(module: str, *options: str) -> Callable[[Bench, int], tuple[list[str], Path]]:
    def command(bench: Bench, iterations: int) -> tuple[list[str], Path]:
        arguments = ["--base-url", bench.site.base_url, "--iterations", str(iterations)]
        return script_command(module, *arguments, *options, executable=bench.executable), REPO

    return command


SIDES_BY_NAME = {
    side.name: side
    for side in (
        Side("setup", _members(MEMBERS), "note", lambda _n: 1),
        Side("login_each", _members(MEMBERS_LOGIN_EACH), "note", lambda n: n),
        Side("once_script", _script("members_note_once"), "note", lambda _n: 1),
        Side("fresh_script", _script("members_note_fresh"), "note", lambda _n: 1),
        Side("keep_context", _keep_context, "contact", lambda _n: 0),
        Side("one_page", _script("contact_form_reuse", "--name", SENDER), "contact", lambda _n: 0),
    )
}


def _environment() -> dict[str, str]:
    """This process's environment with the fixture account's password, as tests pass it."""
    from fixtures._site_routes import DEMO_PASSWORD

    return os.environ | {"NORTHSTAR_SECRET_PASSWORD": DEMO_PASSWORD}


def check_effects(side: Side, iterations: int, saved: int, logins: int) -> None:
    """Fail unless the site saved every iteration's work and saw the side's logins."""
    if saved != iterations:
        raise BenchFailed(f"{side.name}: the site saved {saved} of {iterations} {side.saves}s")
    if logins != (expected := side.logins(iterations)):
        raise BenchFailed(f"{side.name}: the site saw {logins} logins, not {expected}")


async def measure_side(bench: Bench, side: Side, iterations: int) -> Timed:
    """One command of ``side`` for ``iterations`` iterations, from a site that saw nothing."""
    bench.site.reset()  # outside the measurement: every run starts from an empty listing
    command, cwd = side.command(bench, iterations)
    env = _environment()
    measured = await timed(lambda: asyncio.to_thread(wall_seconds, command, cwd=cwd, env=env))
    saved, logins = bench.site.submission_count(side.saves), bench.site.login_count()
    check_effects(side, iterations, saved, logins)
    return measured


def _spread(prefix: str, ratios: Sequence[float]) -> dict[str, float]:
    median = statistics.median(ratios)
    return {prefix: median, f"{prefix}_low": min(ratios), f"{prefix}_high": max(ratios)}


def signin_figures(rounds: Sequence[Mapping[str, Timed]], iterations: int) -> dict[str, float]:
    """Medians per side (wall; tree CPU per iteration) and each round's ratios' spread."""
    values: dict[str, float] = {}
    for side in SIGNIN_SIDES:
        values[f"signin_{side}_s"] = statistics.median(r[side].wall_s for r in rounds)
        tree = statistics.median(r[side].tree_cpu_s for r in rounds)
        values[f"signin_{side}_tree_cpu_ms"] = tree * 1000 / iterations
    for name, (side, baseline) in COMPARISONS.items():
        walls = [r[side].wall_s / r[baseline].wall_s for r in rounds]
        trees = [r[side].tree_cpu_s / r[baseline].tree_cpu_s for r in rounds]
        values |= _spread(f"signin_{name}_ratio", walls)
        values |= _spread(f"signin_{name}_tree_cpu_ratio", trees)
    return values
