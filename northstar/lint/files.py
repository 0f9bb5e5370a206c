"""Lint a recipe file: load it as ``validate`` does, run every rule, place each finding.

A warning line reads ``file:line:column: CODE message (better: ...)``, the form compilers
and editors already understand. The position is that of the finding's field in the YAML
(or of its nearest enclosing field), from the loader's index of composed nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from northstar.lint.rules import RULES, Finding, LintContext
from northstar.plan.compiler import prepare
from northstar.recipe.loader import Positions, load_recipe_positions
from northstar.recipe.model import Recipe

__all__ = ["LintWarning", "format_warning", "lint_file", "lint_recipe"]


@dataclass(frozen=True)
class LintWarning:
    file: str
    line: int
    column: int
    finding: Finding


def lint_file(path: str | Path, context: LintContext | None = None) -> list[LintWarning]:
    """The warnings of a recipe file; a file that is not valid raises ``RecipeInvalid``."""
    recipe, positions = load_recipe_positions(path)
    prepare(recipe, source=str(path), positions=positions)
    return lint_recipe(recipe, positions, source=str(path), context=context)


def lint_recipe(
    recipe: Recipe, positions: Positions, *, source: str, context: LintContext | None = None
) -> list[LintWarning]:
    """Every rule's findings, in file order."""
    context = context or LintContext()
    found = [finding for rule in RULES for finding in rule(recipe, context)]
    placed = [LintWarning(source, *_position(f.path, positions), f) for f in found]
    return sorted(placed, key=lambda w: (w.line, w.column, w.finding.code))


def format_warning(warning: LintWarning) -> str:
    """``file:line:column: CODE message (better: ...)``."""
    finding = warning.finding
    better = f" (better: {finding.better})" if finding.better else ""
    return (
        f"{warning.file}:{warning.line}:{warning.column}: {finding.code} {finding.message}{better}"
    )


def _position(path: str, positions: Positions) -> tuple[int, int]:
    """Where ``path`` is written, or the nearest enclosing field that is."""
    while path:
        if path in positions:
            return positions[path]
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return (1, 1)
