"""The checks ``prepare`` runs on a recipe before any parameter value is known.

Parameter names and defaults, step ids, tab roles and the steps that open popups, the
rules of a submitting step, output names, templates and regexes. Each error names the
field path it rejects; ``placed`` adds that path's line and column. They live here so
that ``northstar.plan.compiler`` reads as the list of what is checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from northstar.errors import NorthstarError, RecipeInvalid
from northstar.recipe.loader import Positions, format_path
from northstar.recipe.model import Check, Recipe, Step, Target
from northstar.recipe.params import BUILTIN_NAMES, coerce_params
from northstar.recipe.templates import TemplateError, template_names

__all__ = [
    "NOT_TEMPLATED",
    "REGEX_FIELDS",
    "check_output_names",
    "check_param_defaults",
    "check_param_names",
    "check_steps",
    "check_tabs",
    "check_templates",
    "placed",
]

# Fields that name things rather than carry page content: never templated.
NOT_TEMPLATED = frozenset({"id", "tab", "opened_by", "description", "effect"})
REGEX_FIELDS = frozenset({"url_regex", "regex"})
# Mappings whose keys are names the author chose, not fields: a tab role or an output
# called `id` or `regex` is checked like any other (``params`` are never templated).
_NAMED_MAPPINGS = frozenset({("tabs",), ("outputs",)})
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ROLE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_LAST_SEGMENT = re.compile(r"(\.[^.\[\]]+|\[\d+\])$")


def placed(error: RecipeInvalid, positions: Positions) -> RecipeInvalid:
    """Add the line and column of the error's field path (or of its nearest parent)."""
    path = str(error.context.get("path", ""))
    while path and path not in positions:
        parent = _LAST_SEGMENT.sub("", path)
        path = parent if parent != path else ""
    if path:
        line, column = positions[path]
        error.context.setdefault("line", line)
        error.context.setdefault("column", column)
    return error


def _invalid(source: str, path: str, message: str, fix: str) -> RecipeInvalid:
    return RecipeInvalid(f"{path}: {message}", file=source, path=path, fix=fix)


def check_param_names(recipe: Recipe, source: str) -> None:
    for name in recipe.params:
        if not PLAIN_NAME.fullmatch(name) or name in BUILTIN_NAMES:
            raise _invalid(
                source,
                f"params.{name}",
                "a parameter name must be a plain name and not a built-in "
                f"({', '.join(sorted(BUILTIN_NAMES))})",
                "Rename the parameter, for example to `my_title`.",
            )


def check_param_defaults(recipe: Recipe, source: str) -> None:
    """A default must be a value of its parameter's type (a file default is read at bind)."""
    for name, param in recipe.params.items():
        if param.default is None or param.type == "file":
            continue
        try:
            coerce_params({name: param}, {})
        except NorthstarError as exc:
            raise _invalid(
                source,
                f"params.{name}.default",
                exc.message,
                "Give a default of the declared type.",
            ) from None


def check_steps(recipe: Recipe, source: str) -> None:
    seen: set[str] = set()
    for i, step in enumerate(recipe.steps):
        if step.id in seen:
            raise _invalid(
                source,
                f"steps[{i}].id",
                f"duplicate step id {step.id!r}",
                "Give each step a unique id.",
            )
        seen.add(step.id)
        if step.tab not in recipe.tabs:
            raise _invalid(
                source,
                f"steps[{i}].tab",
                f"unknown tab role {step.tab!r} (roles: {', '.join(recipe.tabs)})",
                "Declare the role under `tabs:` or use one of the declared roles.",
            )
        if step.effect == "submit" and not step.expect:
            raise _invalid(
                source,
                f"steps[{i}].expect",
                "a submit step must say how its outcome is verified",
                "Add an `expect:` list (for example a url or a visible confirmation).",
            )
        if step.effect == "submit" and step.is_passive:
            raise _invalid(
                source, f"steps[{i}].effect", "a passive step cannot submit", "Remove `effect`."
            )
        _check_submit_target(step, f"steps[{i}]", source)
        for j, check in enumerate(step.expect):
            _check_check_tab(recipe, check, f"steps[{i}].expect[{j}]", source, required=False)
        for j, probe in enumerate(step.reconcile):
            for name, looked in (("check", probe.check), ("page", probe.page)):
                if looked is not None:
                    path = f"steps[{i}].reconcile[{j}].{name}"
                    _check_check_tab(recipe, looked, path, source, required=False)
    for j, check in enumerate(recipe.done_when):
        _check_check_tab(recipe, check, f"done_when[{j}]", source, required=True)
    check_setup(recipe, source)
    for name, output in recipe.outputs.items():
        if output.tab not in recipe.tabs:
            raise _invalid(
                source,
                f"outputs.{name}.tab",
                f"unknown tab role {output.tab!r}",
                "Use a declared role.",
            )


def check_setup(recipe: Recipe, source: str) -> None:
    """Setup steps act on declared tabs with unique ids and submit nothing the run counts.

    A sign-in is repeated when the state expires, so it must not be a mutation that is
    dispatched at most once; ``signed_in`` checks each name a tab whose start page they read.
    """
    seen: set[str] = set()
    for i, step in enumerate(recipe.setup):
        path = f"setup[{i}]"
        if step.id in seen:
            raise _invalid(source, f"{path}.id", f"duplicate step id {step.id!r}", "Rename it.")
        seen.add(step.id)
        if step.tab not in recipe.tabs or recipe.tabs[step.tab].start is None:
            raise _invalid(
                source,
                f"{path}.tab",
                f"setup step on {step.tab!r}, which is not a declared tab with a `start`",
                "Use a tab role declared under `tabs:` with a `start` URL.",
            )
        if step.effect == "submit":
            raise _invalid(
                source,
                f"{path}.effect",
                "a setup step cannot be a submission: setup runs again when the state expires",
                "Remove `effect: submit`; check the sign-in with `expect` or `signed_in`.",
            )
    for j, check in enumerate(recipe.signed_in):
        _check_check_tab(recipe, check, f"signed_in[{j}]", source, required=True)
        assert check.tab is not None
        if recipe.tabs[check.tab].start is None:
            raise _invalid(
                source,
                f"signed_in[{j}].tab",
                f"tab {check.tab!r} has no `start` page to check the sign-in on",
                "Name a tab role with a `start` URL.",
            )


def _check_submit_target(step: Step, path: str, source: str) -> None:
    """A submission never goes to "something close": a loose target needs an explicit yes."""
    if step.allow_loose_target and step.effect != "submit":
        raise _invalid(
            source,
            f"{path}.allow_loose_target",
            "only a submit step (`effect: submit`) can allow a loose target",
            "Remove `allow_loose_target`; `exact: false` alone loosens other steps.",
        )
    target = step.action_target
    if step.effect != "submit" or target is None or not target.is_loose:
        return
    if not step.allow_loose_target:
        raise _invalid(
            source,
            f"{path}.{step.kind}.target{_loose_part(target)}.exact",
            f"a submit step acts on a loose target ({target.describe()}): a substring "
            "could send another form",
            "Match the whole name (drop `exact: false`), or add `allow_loose_target: true` "
            "to the step if any element containing that text may be submitted.",
        )


def _loose_part(target: Target) -> str:
    """The field path, below a target, of the part that matches by substring."""
    if not target.exact and target.matched_text is not None:
        return ""
    assert target.within is not None
    return ".within" + _loose_part(target.within)


def check_output_names(recipe: Recipe, source: str) -> None:
    """Each output name is plain and produced once: by one ``extract`` or ``outputs`` entry."""
    for name in recipe.outputs:
        if not PLAIN_NAME.fullmatch(name):
            raise _invalid(
                source,
                f"outputs.{name}",
                "an output name must be a plain name (letters, digits, _)",
                "Rename the output, for example to `post_url`.",
            )
    seen: set[str] = set()
    for i, step in enumerate(recipe.steps):
        if step.extract is not None:
            if step.extract.as_ in seen:
                raise _duplicate_output(source, f"steps[{i}].extract.as", step.extract.as_)
            seen.add(step.extract.as_)
    for name in recipe.outputs:
        if name in seen:
            raise _duplicate_output(source, f"outputs.{name}", name)


def _duplicate_output(source: str, path: str, name: str) -> RecipeInvalid:
    return _invalid(
        source, path, f"the output {name!r} is already produced", "Give each output its own name."
    )


def _check_check_tab(recipe: Recipe, check: Check, path: str, source: str, required: bool) -> None:
    if check.tab is None and required:
        what = path.split("[", 1)[0]
        raise _invalid(source, f"{path}.tab", f"a {what} check must name its tab", "Add `tab:`.")
    if check.tab is not None and check.tab not in recipe.tabs:
        raise _invalid(
            source, f"{path}.tab", f"unknown tab role {check.tab!r}", "Use a declared tab role."
        )


def check_tabs(recipe: Recipe, source: str) -> None:
    for role in recipe.tabs:
        if not ROLE_NAME.fullmatch(role):
            raise _invalid(
                source,
                f"tabs.{role}",
                "a tab role name must be a plain name (letters, digits, _ . -)",
                "Rename the role, for example to `admin`.",
            )
    index = {step.id: i for i, step in enumerate(recipe.steps)}
    opened: dict[str, str] = {}
    for role, tab in recipe.tabs.items():
        if tab.opened_by is None:
            continue
        path = f"tabs.{role}.opened_by"
        if tab.opened_by not in index:
            raise _invalid(
                source, path, f"no step {tab.opened_by!r} opens this tab", "Name an existing step."
            )
        if tab.opened_by in opened:
            raise _invalid(
                source,
                path,
                f"step {tab.opened_by!r} already opens tab {opened[tab.opened_by]!r}",
                "A step opens at most one popup; name another step.",
            )
        opened[tab.opened_by] = role
        _check_opener(recipe, role, index[tab.opened_by], path, source)


def _check_opener(recipe: Recipe, role: str, at: int, path: str, source: str) -> None:
    opener = recipe.steps[at]
    if opener.tab == role:
        raise _invalid(
            source,
            path,
            f"step {opener.id!r} runs on the tab it opens",
            "Open it from another tab.",
        )
    first_use = next((i for i, s in enumerate(recipe.steps) if s.tab == role), None)
    if first_use is not None and first_use < at:
        raise _invalid(
            source,
            path,
            f"step {opener.id!r} comes after the first step on tab {role!r}",
            "The opening step must come before any step on its popup tab.",
        )
    if opener.kind not in ("click", "press"):
        raise _invalid(source, path, f"step {opener.id!r} cannot open a popup", "Use a click step.")


def check_templates(recipe: Recipe, source: str) -> set[str]:
    known = set(recipe.params) | BUILTIN_NAMES
    used: set[str] = set()
    for loc, key, text in _strings(recipe.model_dump(by_alias=True), ()):
        path = format_path(loc)
        if key in REGEX_FIELDS:
            _check_regex(text, path, source)
            continue
        try:
            names = template_names(text)
        except TemplateError as exc:
            raise _invalid(source, path, str(exc), "Write templates as {{ name }}.") from None
        unknown = names - known
        if unknown:
            raise _invalid(
                source,
                path,
                f"unknown name {{{{ {sorted(unknown)[0]} }}}} in template",
                f"Declare it under `params:` (known: {', '.join(sorted(known))}).",
            )
        used |= names
    return used


def _check_regex(text: str, path: str, source: str) -> None:
    try:
        re.compile(text)
    except (re.error, RecursionError, OverflowError) as exc:
        raise _invalid(
            source, path, f"invalid regular expression: {exc}", "Fix the regex."
        ) from None


def _strings(
    value: Any, loc: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], str, str]]:
    """Every templated string in dumped recipe data, with its path and field name."""
    if isinstance(value, dict):
        named = loc in _NAMED_MAPPINGS  # keys are names, so none of them is skipped
        for key, item in value.items():
            if named or (key not in NOT_TEMPLATED and loc[:1] != ("params",)):
                yield from _strings(item, (*loc, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, (*loc, i))
    elif isinstance(value, str) and loc:
        key = next((p for p in reversed(loc) if isinstance(p, str)), "")
        yield loc, key, value
