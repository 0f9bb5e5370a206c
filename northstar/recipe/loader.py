"""Load a recipe file into a validated ``Recipe``, with errors that point at the line.

YAML is composed into nodes first, so every value keeps its line and column; a schema
error from pydantic is then mapped back to the place in the file and to a field path such
as ``steps[3].click.target``. Every failure is a ``RecipeInvalid``, never a pydantic dump.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from northstar.errors import RecipeInvalid
from northstar.recipe import model as recipe_models
from northstar.recipe._files import read_bounded_text
from northstar.recipe.model import Recipe

__all__ = [
    "MAX_RECIPE_BYTES",
    "Positions",
    "format_path",
    "load_recipe",
    "load_recipe_positions",
    "parse_recipe",
    "parse_recipe_positions",
]

Loc = tuple[str | int, ...]
Positions = Mapping[str, tuple[int, int]]  # "steps[3].click" -> (line, column)
_MAX_DEPTH = 64
_MAX_VALUES = 50_000
MAX_RECIPE_BYTES = 1 << 20  # 1 MiB: far above any hand-written procedure


def load_recipe(path: str | Path) -> Recipe:
    """Read and validate the recipe at ``path``."""
    return load_recipe_positions(path)[0]


def load_recipe_positions(path: str | Path) -> tuple[Recipe, Positions]:
    """The recipe and where each field path sits in the file (for later errors)."""
    file = Path(path)

    def refuse(message: str, fix: str) -> RecipeInvalid:
        return RecipeInvalid(message, file=str(file), fix=fix)

    text = read_bounded_text(file, limit=MAX_RECIPE_BYTES, what="recipe file", refuse=refuse)
    return parse_recipe_positions(text, source=str(file))


def parse_recipe(text: str, *, source: str = "<recipe>") -> Recipe:
    """Validate recipe YAML text; ``source`` names it in errors."""
    return parse_recipe_positions(text, source=source)[0]


def parse_recipe_positions(text: str, *, source: str = "<recipe>") -> tuple[Recipe, Positions]:
    """Validate recipe YAML text; also return each field path's ``(line, column)``."""
    data, positions = _compose(text, source)
    if not isinstance(data, dict):
        raise RecipeInvalid(
            "the recipe must be a mapping with name, tabs and steps",
            file=source,
            line=1,
            column=1,
            fix="Start the file with `name: my-recipe`; see `northstar schema`.",
        )
    try:
        recipe = Recipe.model_validate(data)
    except ValidationError as exc:
        raise _schema_error(exc, positions, source) from None
    except RecursionError:
        raise RecipeInvalid("the recipe nests too deeply", file=source) from None
    return recipe, {format_path(loc): place for loc, place in positions.items()}


def format_path(loc: Sequence[str | int]) -> str:
    """``('steps', 3, 'click', 'target')`` -> ``steps[3].click.target``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out or "(top level)"


def _compose(text: str, source: str) -> tuple[Any, dict[Loc, tuple[int, int]]]:
    try:
        return _DataBuilder.build(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise RecipeInvalid(
            f"YAML syntax error: {exc.problem or exc.context}",
            file=source,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
            fix="Fix the YAML at that position (indentation, a missing colon or quote).",
        ) from None
    except yaml.reader.ReaderError as exc:
        line, column = _text_position(text, exc.position)
        raise RecipeInvalid(
            f"YAML error: character {exc.character!r} is not allowed in a recipe",
            file=source,
            line=line,
            column=column,
            fix="Remove the control character or write it as an escape in a quoted string.",
        ) from None
    except yaml.YAMLError as exc:
        raise RecipeInvalid(f"YAML error: {exc}", file=source) from None
    except RecursionError:
        raise RecipeInvalid("the recipe nests too deeply", file=source) from None


def _text_position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


class _DepthLimitedLoader(yaml.SafeLoader):
    """A safe loader that stops composing past ``_MAX_DEPTH`` (before the stack runs out)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self.depth += 1
        try:
            if self.depth > _MAX_DEPTH + 1:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    problem="the document nests too deeply", problem_mark=mark
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _DataBuilder:
    """Builds plain data from YAML nodes, remembering where each path came from.

    Aliases are expanded, so the number of values built is bounded: a few short lines
    of nested aliases ("billion laughs") would otherwise build billions of them.
    """

    def __init__(self, loader: yaml.SafeLoader) -> None:
        self.loader = loader
        self.positions: dict[Loc, tuple[int, int]] = {}
        self.budget = _MAX_VALUES

    @classmethod
    def build(cls, text: str) -> tuple[Any, dict[Loc, tuple[int, int]]]:
        loader = _DepthLimitedLoader(text)
        try:
            node = loader.get_single_node()
            builder = cls(loader)
            data = builder.value(node, ()) if node is not None else None
        finally:
            loader.dispose()
        return data, builder.positions

    def value(self, node: yaml.Node, loc: Loc) -> Any:
        self.positions.setdefault(loc, _node_position(node))
        self.budget -= 1
        if self.budget < 0:
            raise _yaml_problem("the document is too large (or expands aliases too much)", node)
        if len(loc) > _MAX_DEPTH:
            raise _yaml_problem("the document nests too deeply (or refers to itself)", node)
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, loc)
        if isinstance(node, yaml.SequenceNode):
            return [self.value(item, (*loc, i)) for i, item in enumerate(node.value)]
        return self.construct(node)

    def mapping(self, node: yaml.MappingNode, loc: Loc) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self.key(key_node)
            if key in out:
                raise _yaml_problem(f"duplicate key {key!r}", key_node)
            self.positions[(*loc, key)] = _node_position(key_node)
            out[key] = self.value(value_node, (*loc, key))
        return out

    def key(self, node: yaml.Node) -> str:
        # Checked on the node: the merge tag has no constructor in the safe loader.
        if node.tag == "tag:yaml.org,2002:merge":
            raise _yaml_problem("merge keys (<<) are not supported in recipes", node)
        if not isinstance(node, yaml.ScalarNode):
            raise _yaml_problem("a key must be text, not a list or mapping", node)
        if node.style is None:
            # A plain key is its text: YAML 1.1 would read `on:` (retry.on), `yes:` or
            # `no:` as booleans and `1:` as a number, and no key of the format is either.
            return str(node.value)
        key = self.construct(node)
        if not isinstance(key, str):
            raise _yaml_problem(f"a key must be text, not {key!r}", node)
        return key

    def construct(self, node: yaml.Node) -> Any:
        # PyYAML's constructors raise plain Python errors for some tagged or oversized
        # scalars (`!!timestamp x`, `!!bool x`, an integer of 5000 digits).
        try:
            return self.loader.construct_object(node, deep=True)
        except (ValueError, TypeError, LookupError, AttributeError, ArithmeticError):
            shown = str(node.value)
            shown = shown if len(shown) <= 40 else shown[:40] + "..."
            raise _yaml_problem(f"cannot read {shown!r} as {_tag_name(node.tag)}", node) from None


def _tag_name(tag: str) -> str:
    """``tag:yaml.org,2002:int`` -> ``int``."""
    return tag.rsplit(":", 1)[-1]


def _node_position(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _yaml_problem(problem: str, node: yaml.Node) -> yaml.MarkedYAMLError:
    return yaml.MarkedYAMLError(problem=problem, problem_mark=node.start_mark)


def _schema_error(
    exc: ValidationError, positions: dict[Loc, tuple[int, int]], source: str
) -> RecipeInvalid:
    """Every problem, in file order: the first names the place, the others follow it."""
    problems = _problems(exc.errors(include_url=False, include_input=False))
    placed = sorted(
        ((_nearest_position(tuple(e["loc"]), positions), e) for e in problems),
        key=lambda item: item[0],
    )
    (line, column), first = placed[0]
    loc: Loc = tuple(first["loc"])
    message = f"{format_path(loc)}: {_describe(first)}"
    if len(placed) > 1:
        others = [f"{at[0]}:{at[1]} {format_path(e['loc'])}: {_describe(e)}" for at, e in placed]
        others = others[1:]
        message += f" (also: {'; '.join(others)})"
    return RecipeInvalid(
        message, file=source, line=line, column=column, path=format_path(loc), fix=_fix_for(first)
    )


def _problems(errors: list[Any]) -> list[Any]:
    """pydantic's errors, with one per field for a union and no "missing" that a typo explains.

    A field of several types (a parameter's default) fails once per type; those become one
    problem. A missing ``target`` beside an unknown ``taget`` is the typo's echo: the
    unknown field's "did you mean `target`?" says all there is to say.
    """
    typos = {
        (tuple(e["loc"][:-1]), _closest_field(str(e["loc"][-1])))
        for e in errors
        if e["type"] == "extra_forbidden"
    }
    out: list[Any] = []
    for error in errors:
        loc = tuple(error["loc"])
        if error["type"] == "missing" and (loc[:-1], loc[-1]) in typos:
            continue
        merged = _union_member(error, out)
        if merged is None:
            out.append(error)
    return out


def _union_member(error: Any, found: list[Any]) -> Any:
    """Fold a type error of one union member into the previous one of the same field."""
    loc = tuple(error["loc"])
    if not loc or not error["type"].endswith("_type") or not found:
        return None
    last = found[-1]
    merged = last.get("union")
    field = tuple(last["loc"]) if merged else tuple(last["loc"])[:-1]
    if not last["type"].endswith("_type") or field != loc[:-1]:
        return None
    types = [*(merged or [str(last["loc"][-1])]), str(loc[-1])]
    message = f"expected one of the types: {', '.join(types)}"
    found[-1] = {**last, "loc": field, "type": "union_type", "union": types, "msg": message}
    return found[-1]


def _nearest_position(loc: Loc, positions: dict[Loc, tuple[int, int]]) -> tuple[int, int]:
    for end in range(len(loc), -1, -1):
        if loc[:end] in positions:
            return positions[loc[:end]]
    return (1, 1)


def _describe(error: Any) -> str:
    kind = error["type"]
    loc = error["loc"]
    if kind == "extra_forbidden":
        hint = _closest_field(str(loc[-1]))
        return f"unknown field `{loc[-1]}`" + (f"; did you mean `{hint}`?" if hint else "")
    if kind == "missing":
        return f"missing field `{loc[-1]}`"
    message = str(error["msg"])
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _fix_for(error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return "Remove or rename the field; `northstar schema` lists the allowed ones."
    if error["type"] == "missing":
        return "Add the missing field."
    return "Correct the value at that path; `northstar schema` shows the format."


def _closest_field(name: str) -> str | None:
    match = difflib.get_close_matches(name, sorted(_known_fields()), n=1, cutoff=0.7)
    return match[0] if match else None


def _known_fields() -> set[str]:
    fields: set[str] = set()
    for obj in vars(recipe_models).values():
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            for field_name, info in obj.model_fields.items():
                fields.add(info.alias or field_name)
    return fields
