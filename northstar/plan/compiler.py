"""Compile a recipe into plans: checked once per run, rendered once per iteration.

``prepare`` does everything that does not depend on parameter values (structure checks,
template names, regexes, the recipe hash) so a mistake is found before any browser starts.
``bind`` renders one iteration's ``Plan`` from typed parameter values.

The static checks live in ``northstar.recipe.checks``, the rendering of a plan in
``rendering`` and the digests it carries in ``digests``; ``CompiledRecipe`` and ``Plan``
are in ``model``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

from northstar.errors import ParamInvalid, ParamMissing, RecipeInvalid
from northstar.plan.model import CompiledRecipe, Plan
from northstar.plan.rendering import recipe_dir, render_plan
from northstar.recipe.checks import (
    check_output_names,
    check_param_defaults,
    check_param_names,
    check_steps,
    check_tabs,
    check_templates,
    placed,
)
from northstar.recipe.loader import Positions
from northstar.recipe.model import Recipe
from northstar.recipe.params import coerce_params

__all__ = [
    "CompiledRecipe",
    "bind",
    "compile_recipe",
    "prepare",
    "recipe_hash",
    "with_default_timeout",
]


def recipe_hash(recipe: Recipe) -> str:
    """sha256 over the canonical recipe (sorted JSON of the validated model)."""
    canonical = json.dumps(recipe.model_dump(mode="json", by_alias=True), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def prepare(
    recipe: Recipe, *, source: str = "<recipe>", positions: Positions | None = None
) -> CompiledRecipe:
    """Check structure, tab roles, step order, templates and regexes; hash the recipe.

    ``positions`` (from ``load_recipe_positions``) lets an error name its line and column.
    """
    try:
        check_param_names(recipe, source)
        check_param_defaults(recipe, source)
        check_steps(recipe, source)
        check_tabs(recipe, source)
        check_output_names(recipe, source)
        names = check_templates(recipe, source)
    except RecipeInvalid as exc:
        raise placed(exc, positions or {}) from None
    return CompiledRecipe(
        recipe,
        recipe_hash(recipe),
        source,
        "base_url" in names,
        step_lines=_step_lines(len(recipe.steps), positions or {}),
    )


def _step_lines(count: int, positions: Positions) -> tuple[int, ...]:
    """The line of each of ``count`` steps, or none at all if any is unknown."""
    lines = [positions.get(f"steps[{i}]", (0, 0))[0] for i in range(count)]
    return tuple(lines) if all(lines) else ()


def with_default_timeout(compiled: CompiledRecipe, timeout_ms: int | None) -> CompiledRecipe:
    """The project's default step time limit, for a recipe that sets no ``timeout`` itself.

    The definition hash stays the recipe's own: like the base URL, the project's default is
    a setting of the run, not part of the procedure.
    """
    if timeout_ms is None or "timeout" in compiled.recipe.model_fields_set:
        return compiled
    recipe = compiled.recipe.model_copy(update={"timeout": timeout_ms})
    return dataclasses.replace(compiled, recipe=recipe)


def compile_recipe(
    recipe: Recipe,
    params: Mapping[str, Any],
    *,
    base_url: str | None = None,
    iteration: int = 1,
    source: str = "<recipe>",
) -> Plan:
    """Recipe + raw parameters -> one iteration's plan (``prepare`` then ``bind``)."""
    compiled = prepare(recipe, source=source)
    values = coerce_params(recipe.params, params, recipe_dir=recipe_dir(source))
    return bind(compiled, values, base_url=base_url, iteration=iteration)


def bind(
    compiled: CompiledRecipe,
    values: Mapping[str, Any],
    *,
    base_url: str | None = None,
    iteration: int = 1,
) -> Plan:
    """Render one iteration's plan from typed parameter values (see ``coerce_params``)."""
    recipe = compiled.recipe
    _check_base_url(base_url, compiled.uses_base_url)
    _check_values(recipe, values)
    scope = {**values, "iteration": iteration, "base_url": (base_url or "").rstrip("/")}
    try:
        return render_plan(compiled, values, scope, base_url, iteration)
    except RecipeInvalid as exc:  # a rendered URL or value; name the recipe it came from
        exc.with_context(file=compiled.source)
        raise


def _check_base_url(base_url: str | None, required: bool) -> None:
    if not base_url:
        if required:
            raise ParamMissing(
                "the recipe uses {{ base_url }} but no base URL was given",
                fix="Pass --base-url URL or set NORTHSTAR_BASE_URL.",
            )
        return
    try:
        parts: SplitResult | None = urlsplit(base_url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ParamInvalid(
            f"the base URL {base_url!r} is not an http:// or https:// URL with a host",
            fix="Pass --base-url with a scheme and host, for example http://127.0.0.1:8000.",
        )


def _check_values(recipe: Recipe, values: Mapping[str, Any]) -> None:
    """Every declared parameter has a value (``coerce_params`` fills in defaults)."""
    missing = [name for name in recipe.params if name not in values]
    if missing:
        raise ParamMissing(
            f"no value for parameter {missing[0]!r}",
            fix="Bind the values that coerce_params returns for this recipe.",
        )
