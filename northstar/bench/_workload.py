"""The work the run benchmark measures, shared by the suite and its helper modules.

Every section runs one recipe (``recipes/contact-form.yaml``) for one sender, requested as
the CLI requests it, and fails the same way when a measured run did not do its work. It is
a module of its own so that ``_fake_browser`` and ``_processes`` can use it without
importing the suite (``run_bench``), which imports them.
"""

from __future__ import annotations

from pathlib import Path

from northstar.composition import load_compiled
from northstar.journal import Journal
from northstar.plan.compiler import bind
from northstar.recipe.params import coerce_params
from northstar.run.execution import RunRequest
from northstar.run.repeat import RepeatOptions

__all__ = [
    "RECIPE",
    "REPO",
    "SENDER",
    "BenchFailed",
    "create_run",
    "recipe_request",
    "steps_per_iteration",
]

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "recipes" / "contact-form.yaml"
SENDER = "Bench Person"


class BenchFailed(Exception):
    """A measured run did not do its work (not verified, submissions missing)."""


def recipe_request(base_url: str, iterations: int) -> RunRequest:
    """The run ``northstar run contact-form -p name=... --repeat N`` builds (cli._inputs)."""
    compiled = load_compiled(RECIPE)
    row = coerce_params(compiled.recipe.params, {"name": SENDER}, recipe_dir=RECIPE.parent)
    bind(compiled, row, base_url=base_url, iteration=1)  # renders the row, as the CLI does
    return RunRequest(
        recipe_path=RECIPE,
        compiled=compiled,
        rows=[row],
        repeat=RepeatOptions.of(iterations, 0),
        base_url=base_url,
        project="bench",
    )


def steps_per_iteration() -> int:
    return len(load_compiled(RECIPE).recipe.steps)


def create_run(journal: Journal, name: str, total: int) -> str:
    run_id, _credential = journal.create_run(
        recipe_path=str(RECIPE),
        recipe_name=name,
        definition_hash="0" * 64,
        project="bench",
        profile="bench",
        params_fingerprint="0" * 64,
        total_iterations=total,
        options={},
    )
    return run_id
