"""Compile a recipe into plans: checked once per run, rendered once per iteration.

``prepare`` does everything that does not depend on parameter values (structure checks,
template names, regexes, the recipe hash) so a mistake is found before any browser starts.
``bind`` renders one iteration's ``Plan`` from typed parameter values.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import SplitResult, urljoin, urlsplit

from pydantic import BaseModel, ValidationError

from northstar.errors import NorthstarError, ParamInvalid, ParamMissing, RecipeInvalid
from northstar.loader import Positions, format_path
from northstar.params import (
    BUILTIN_NAMES,
    coerce_params,
    existing_file,
    file_digest,
    params_fingerprint,
)
from northstar.plan import BoundStep, BoundTab, Plan
from northstar.recipe import Check, Recipe, ReconcileProbe, Step, TabRole
from northstar.templates import TemplateError, render, template_names

__all__ = ["CompiledRecipe", "bind", "compile_recipe", "prepare", "recipe_hash"]

# Fields that name things rather than carry page content: never templated.
_NOT_TEMPLATED = frozenset({"id", "tab", "opened_by", "description", "effect", "name_"})
_REGEX_FIELDS = frozenset({"url_regex", "regex"})
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class CompiledRecipe:
    """A recipe that passed every check that does not need parameter values."""

    recipe: Recipe
    recipe_hash: str
    source: str
    uses_base_url: bool


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
        _check_param_names(recipe, source)
        _check_param_defaults(recipe, source)
        _check_steps(recipe, source)
        _check_tabs(recipe, source)
        _check_output_names(recipe, source)
        names = _check_templates(recipe, source)
    except RecipeInvalid as exc:
        raise _placed(exc, positions or {}) from None
    return CompiledRecipe(recipe, recipe_hash(recipe), source, "base_url" in names)


_LAST_SEGMENT = re.compile(r"(\.[^.\[\]]+|\[\d+\])$")


def _placed(error: RecipeInvalid, positions: Positions) -> RecipeInvalid:
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
    values = coerce_params(recipe.params, params, recipe_dir=_recipe_dir(source))
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
        return _render_plan(compiled, values, scope, base_url, iteration)
    except RecipeInvalid as exc:  # a rendered URL or value; name the recipe it came from
        exc.with_context(file=compiled.source)
        raise


def _render_plan(
    compiled: CompiledRecipe,
    values: Mapping[str, Any],
    scope: Mapping[str, Any],
    base_url: str | None,
    iteration: int,
) -> Plan:
    recipe = compiled.recipe
    tabs = _bind_tabs(recipe, scope, base_url)
    steps = tuple(_bind_step(compiled, i, step, scope, tabs) for i, step in enumerate(recipe.steps))
    files = _selected_files(recipe, values, steps)
    secrets = frozenset(
        str(values[n]) for n, p in recipe.params.items() if p.secret and values.get(n)
    )
    return Plan(
        recipe_name=recipe.name,
        recipe_version=recipe.version,
        definition_hash=_definition_hash(compiled.recipe_hash, files),
        iteration=iteration,
        tabs=MappingProxyType(tabs),
        steps=steps,
        outputs=tuple((n, _render_model(o, scope)) for n, o in recipe.outputs.items()),
        done_when=tuple(_render_model(c, scope) for c in recipe.done_when),
        default_timeout_ms=recipe.timeout,
        params_fingerprint=params_fingerprint(recipe.params, values),
        secrets=secrets,
        files=files,
        param_values=MappingProxyType(dict(values)),
    )


def _recipe_dir(source: str) -> Path | None:
    """The folder of the recipe file, or ``None`` for text that came from no file."""
    return None if source.startswith("<") else Path(source).parent


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
    if parts is None or not parts.scheme or not parts.netloc:
        raise ParamInvalid(
            f"the base URL {base_url!r} is not an absolute URL",
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


def _invalid(source: str, path: str, message: str, fix: str) -> RecipeInvalid:
    return RecipeInvalid(f"{path}: {message}", file=source, path=path, fix=fix)


def _check_param_names(recipe: Recipe, source: str) -> None:
    for name in recipe.params:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in BUILTIN_NAMES:
            raise _invalid(
                source,
                f"params.{name}",
                "a parameter name must be a plain name and not a built-in "
                f"({', '.join(sorted(BUILTIN_NAMES))})",
                "Rename the parameter, for example to `my_title`.",
            )


def _check_param_defaults(recipe: Recipe, source: str) -> None:
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


def _check_steps(recipe: Recipe, source: str) -> None:
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
        for j, check in enumerate(step.expect):
            _check_check_tab(recipe, check, f"steps[{i}].expect[{j}]", source, required=False)
        for j, probe in enumerate(step.reconcile):
            if probe.check is not None:
                path = f"steps[{i}].reconcile[{j}].check"
                _check_check_tab(recipe, probe.check, path, source, required=False)
    for j, check in enumerate(recipe.done_when):
        _check_check_tab(recipe, check, f"done_when[{j}]", source, required=True)
    for name, output in recipe.outputs.items():
        if output.tab not in recipe.tabs:
            raise _invalid(
                source,
                f"outputs.{name}.tab",
                f"unknown tab role {output.tab!r}",
                "Use a declared role.",
            )


def _check_output_names(recipe: Recipe, source: str) -> None:
    """Each output name is produced once: by one ``extract`` step or one ``outputs`` entry."""
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
        raise _invalid(source, f"{path}.tab", "a done_when check must name its tab", "Add `tab:`.")
    if check.tab is not None and check.tab not in recipe.tabs:
        raise _invalid(
            source, f"{path}.tab", f"unknown tab role {check.tab!r}", "Use a declared tab role."
        )


def _check_tabs(recipe: Recipe, source: str) -> None:
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


def _check_templates(recipe: Recipe, source: str) -> set[str]:
    known = set(recipe.params) | BUILTIN_NAMES
    used: set[str] = set()
    for loc, key, text in _strings(recipe.model_dump(by_alias=True), ()):
        path = format_path(loc)
        if key in _REGEX_FIELDS:
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
        for key, item in value.items():
            if key not in _NOT_TEMPLATED and not (loc and loc[0] == "params"):
                yield from _strings(item, (*loc, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, (*loc, i))
    elif isinstance(value, str) and loc:
        key = next((p for p in reversed(loc) if isinstance(p, str)), "")
        yield loc, key, value


def _render_value(value: Any, scope: Mapping[str, Any], key: str = "") -> Any:
    if isinstance(value, dict):
        return {
            k: (v if k in _NOT_TEMPLATED else _render_value(v, scope, k)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_render_value(v, scope, key) for v in value]
    if isinstance(value, str) and key not in _REGEX_FIELDS:
        return render(value, scope)
    return value


def _render_model(model: M, scope: Mapping[str, Any]) -> M:
    data = model.model_dump(by_alias=True, exclude_defaults=True)
    try:
        return type(model).model_validate(_render_value(data, scope))
    except ValidationError as exc:
        raise RecipeInvalid(
            f"a rendered value is not valid: {exc.errors()[0]['msg']}",
            fix="Check the parameter values used in this step.",
        ) from None


def _split(url: str, path: str) -> SplitResult:
    try:
        return urlsplit(url)
    except ValueError:
        raise _bad_url(path) from None


def _join(base: str, url: str, path: str) -> str:
    try:
        return urljoin(base, url)
    except ValueError:
        raise _bad_url(path) from None


def _bad_url(path: str) -> RecipeInvalid:
    # Neither the URL nor urllib's message (which may quote the host) is shown: a secret
    # parameter may have been rendered into it.
    return RecipeInvalid(
        f"{path}: not a valid URL (an unbalanced [ ] or a host with invalid characters)",
        path=path,
        fix="Check the URL in the recipe and the parameter values rendered into it.",
    )


def _origin(url: str, path: str) -> str:
    parts = _split(url, path)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _absolute(url: str, base_url: str | None, what: str, path: str) -> str:
    if _split(url, path).scheme:
        return url
    if base_url:
        return _join(base_url.rstrip("/") + "/", url.lstrip("/"), path)
    raise ParamMissing(
        f"{what} {url!r} is relative and no base URL was given",
        fix="Pass --base-url URL or write an absolute URL in the recipe.",
    )


def _bind_tabs(
    recipe: Recipe, scope: Mapping[str, Any], base_url: str | None
) -> dict[str, BoundTab]:
    tabs = {role: _bind_tab(role, tab, scope, base_url) for role, tab in recipe.tabs.items()}
    steps_by_id = {s.id: s for s in recipe.steps}
    for role in tabs:
        origins = _inherited_origins(tabs, steps_by_id, role)
        tabs[role] = replace(tabs[role], origins=origins)
    return tabs


def _bind_tab(role: str, tab: TabRole, scope: Mapping[str, Any], base_url: str | None) -> BoundTab:
    path = f"tabs.{role}"
    start = None
    if tab.start:
        start = _absolute(
            render(tab.start, scope), base_url, f"tab {role!r} start", path + ".start"
        )
    origins = tuple(
        _origin(_absolute(render(o, scope), base_url, "origin", f"{path}.origins[{i}]"), path)
        for i, o in enumerate(tab.origins)
    )
    if not origins and start:
        origins = (_origin(start, path + ".start"),)
    return BoundTab(role, start, tab.opened_by, origins)


def _inherited_origins(
    tabs: Mapping[str, BoundTab], steps_by_id: Mapping[str, Step], role: str
) -> tuple[str, ...]:
    """A popup without its own origins may visit its opener's (through a chain of popups)."""
    bound = tabs[role]
    for _ in range(len(tabs)):  # prepare rules out cycles; the bound is a second guard
        if bound.origins or bound.opened_by is None:
            return bound.origins
        bound = tabs[steps_by_id[bound.opened_by].tab]
    return bound.origins


def _bind_step(
    compiled: CompiledRecipe,
    index: int,
    step: Step,
    scope: Mapping[str, Any],
    tabs: Mapping[str, BoundTab],
) -> BoundStep:
    recipe = compiled.recipe
    rendered = _render_model(step, scope)
    if rendered.upload is not None:
        files = [_upload_path(f, compiled.source) for f in rendered.upload.files]
        rendered = rendered.model_copy(
            update={"upload": rendered.upload.model_copy(update={"files": files})}
        )
    rendered = _resolve_gotos(rendered, tabs[step.tab].start, f"steps[{index}]")
    opens = next((r for r, t in tabs.items() if t.opened_by == step.id), None)
    return BoundStep(
        index=index,
        step=rendered,
        timeout_ms=step.timeout or recipe.timeout,
        retry=step.retry or recipe.retry,
        opens_tab=opens,
        input_fingerprint=_input_fingerprint(recipe, rendered, scope) if step.effect else "",
    )


def _resolve_gotos(step: Step, start: str | None, path: str) -> Step:
    """Relative ``goto``s (the step's and its reconcile probes') against the role's start.

    A popup role has no start: its relative gotos are resolved against the page's URL
    by the adapter.
    """
    if start is None:
        return step
    update: dict[str, Any] = {}
    if step.goto is not None:
        update["goto"] = _join(start, step.goto, path + ".goto")
    if any(probe.goto is not None for probe in step.reconcile):
        update["reconcile"] = [
            _resolve_probe(probe, start, f"{path}.reconcile[{i}].goto")
            for i, probe in enumerate(step.reconcile)
        ]
    return step.model_copy(update=update) if update else step


def _resolve_probe(probe: ReconcileProbe, start: str, path: str) -> ReconcileProbe:
    if probe.goto is None:
        return probe
    return probe.model_copy(update={"goto": _join(start, probe.goto, path)})


def _input_fingerprint(recipe: Recipe, step: Step, scope: Mapping[str, Any]) -> str:
    """Digest of a submission's rendered inputs, with secret values hashed first."""
    secrets = [
        str(scope[name])
        for name, param in recipe.params.items()
        if param.secret and scope.get(name) not in (None, "")
    ]
    data = _mask_secrets(step.model_dump(mode="json", by_alias=True), secrets)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _mask_secrets(value: Any, secrets: list[str]) -> Any:
    """Replace every secret inside the strings of dumped data with its digest."""
    if isinstance(value, dict):
        return {key: _mask_secrets(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask_secrets(item, secrets) for item in value]
    if isinstance(value, str):
        for secret in sorted(secrets, key=len, reverse=True):
            value = value.replace(secret, _secret_digest(secret))
    return value


def _secret_digest(secret: str) -> str:
    return "sha256:" + hashlib.sha256(secret.encode()).hexdigest()


def _upload_path(path: str, source: str) -> str:
    """An upload path as absolute; a relative one is read from the recipe's folder."""
    file = existing_file(path, _recipe_dir(source))
    if file is None:
        raise ParamInvalid(
            f"upload file {path!r} does not exist", fix="Pass the path of an existing file."
        )
    return str(file)


def _selected_files(
    recipe: Recipe, values: Mapping[str, Any], steps: tuple[BoundStep, ...]
) -> tuple[tuple[str, str], ...]:
    """Every file the iteration selects (file params and uploads), with its digest."""
    paths = {str(values[n]) for n, p in recipe.params.items() if p.type == "file" and values.get(n)}
    for bound in steps:
        if bound.step.upload is not None:
            paths.update(bound.step.upload.files)
    return tuple((path, file_digest(path)) for path in sorted(paths))


def _definition_hash(recipe_digest: str, files: tuple[tuple[str, str], ...]) -> str:
    text = recipe_digest + "".join(f"\n{path}={digest}" for path, digest in files)
    return hashlib.sha256(text.encode()).hexdigest()
