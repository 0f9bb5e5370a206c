"""Lint a recipe file: load it as ``validate`` does, run the selected rules, place each finding.

A warning line reads ``file:line:column: CODE message (better: ...)``, the form compilers
and editors already understand. The position is that of the finding's field in the YAML
(or of its nearest enclosing field), from the loader's index of composed nodes.

Which codes are reported: ``Selection`` (``--select`` / ``--ignore``, or the project
file's ``[lint]`` table): the default rules unless ``select`` names codes (``ALL`` for
every rule), less the ignored ones. A finding is silenced on its own line by a comment
``# northstar: noqa[CODE]`` (several codes: ``noqa[CODE, CODE]``; any code: ``noqa``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from northstar.errors import UsageInvalid
from northstar.lint.rules import CODES, DEFAULT_CODES, RULES, Finding, LintContext
from northstar.plan.compiler import prepare
from northstar.recipe.loader import Positions, load_recipe_positions
from northstar.recipe.model import Recipe

__all__ = [
    "LintWarning",
    "Selection",
    "format_warning",
    "lint_file",
    "lint_recipe",
    "silenced_lines",
]

_NOQA = re.compile(r"#\s*northstar:\s*noqa(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)


@dataclass(frozen=True)
class LintWarning:
    file: str
    line: int
    column: int
    finding: Finding


@dataclass(frozen=True)
class Selection:
    """The codes reported: ``select`` (``None``: the default rules) less ``ignore``."""

    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()

    @classmethod
    def of(cls, select: Collection[str] = (), ignore: Collection[str] = ()) -> Selection:
        """From codes as a person writes them; an unknown code is a usage error."""
        unknown = sorted((set(select) | set(ignore)) - set(CODES) - {"ALL"})
        if unknown:
            raise UsageInvalid(
                f"unknown lint code {unknown[0]!r}",
                fix=f"Use ALL or codes from `northstar lint --list-rules`: {', '.join(CODES)}.",
            )
        chosen = set(CODES) if "ALL" in select else set(select)
        return cls(frozenset(chosen) if select else None, frozenset(ignore))

    @property
    def codes(self) -> frozenset[str]:
        return (DEFAULT_CODES if self.select is None else self.select) - self.ignore


def lint_file(
    path: str | Path, context: LintContext | None = None, selection: Selection | None = None
) -> list[LintWarning]:
    """The warnings of a recipe file; a file that is not valid raises ``RecipeInvalid``."""
    recipe, positions = load_recipe_positions(path)
    prepare(recipe, source=str(path), positions=positions)
    found = lint_recipe(recipe, positions, source=str(path), context=context, selection=selection)
    silenced = silenced_lines(Path(path).read_text(encoding="utf-8").splitlines())
    return [warning for warning in found if not _is_silenced(warning, silenced)]


def lint_recipe(
    recipe: Recipe,
    positions: Positions,
    *,
    source: str,
    context: LintContext | None = None,
    selection: Selection | None = None,
) -> list[LintWarning]:
    """The selected rules' findings, in file order."""
    context = context or LintContext()
    codes = (selection or Selection()).codes
    rules = [rule for rule in RULES if codes & set(rule.codes)]
    found = [f for rule in rules for f in rule.check(recipe, context) if f.code in codes]
    placed = [LintWarning(source, *_position(f.path, positions), f) for f in found]
    return sorted(placed, key=lambda w: (w.line, w.column, w.finding.code))


def silenced_lines(lines: Iterable[str]) -> dict[int, frozenset[str] | None]:
    """The lines with a ``# northstar: noqa`` comment: their codes, ``None`` for any code."""
    silenced: dict[int, frozenset[str] | None] = {}
    for number, line in enumerate(lines, start=1):
        match = _NOQA.search(line)
        if match is not None:
            codes = match["codes"]
            silenced[number] = (
                None if codes is None else frozenset(c.strip() for c in codes.split(",") if c)
            )
    return silenced


def _is_silenced(warning: LintWarning, silenced: Mapping[int, frozenset[str] | None]) -> bool:
    if warning.line not in silenced:
        return False
    codes = silenced[warning.line]
    return codes is None or warning.finding.code in codes


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
