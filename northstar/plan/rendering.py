"""Rendering one iteration's ``Plan``: templates, tab roles and their origins, URLs, uploads.

``bind`` in ``northstar.plan.compiler`` checks the base URL and the values, then calls
``render_plan``; the digests the plan carries are made in ``northstar.plan.digests``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import SplitResult, urljoin, urlsplit

from pydantic import BaseModel, ValidationError

from northstar.errors import ParamInvalid, ParamMissing, RecipeInvalid
from northstar.fences import allowed_upload, upload_refused
from northstar.plan.digests import definition_hash, input_fingerprint, selected_files
from northstar.plan.model import BoundStep, BoundTab, CompiledRecipe, Plan
from northstar.recipe.checks import NOT_TEMPLATED, REGEX_FIELDS
from northstar.recipe.model import Recipe, ReconcileProbe, RetryPolicy, Step, TabRole
from northstar.recipe.params import existing_file, params_fingerprint, row_values
from northstar.recipe.templates import render, render_url

__all__ = ["recipe_dir", "render_plan", "upload_roots"]

M = TypeVar("M", bound=BaseModel)

# Fields holding a URL: one the browser is sent to (``goto``) or a glob the page's URL is
# checked against (``url``), which the browser shows percent-encoded, or where a resume
# reopens a submission's tab (``after_submit``). Values in their query are percent-encoded
# (``render_url``); a tab's ``start`` is rendered the same way in ``_bind_tab``.
URL_FIELDS = frozenset({"goto", "url", "after_submit"})


def render_plan(
    compiled: CompiledRecipe,
    values: Mapping[str, Any],
    scope: Mapping[str, Any],
    base_url: str | None,
    iteration: int,
) -> Plan:
    recipe = compiled.recipe
    roots = upload_roots(compiled)
    _check_file_params(recipe, values, roots)
    tabs = _bind_tabs(recipe, scope, base_url)
    steps = tuple(
        _bind_step(compiled, i, step, scope, tabs, roots) for i, step in enumerate(recipe.steps)
    )
    files = selected_files(recipe, values, steps)
    secrets = frozenset(
        str(values[n]) for n, p in recipe.params.items() if p.secret and values.get(n)
    )
    return Plan(
        recipe_name=recipe.name,
        recipe_version=recipe.version,
        definition_hash=definition_hash(compiled.recipe_hash, files),
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
        recipe_file=compiled.source,
        row_values=MappingProxyType(row_values(recipe.params, values)),
        upload_roots=roots,
    )


def recipe_dir(source: str) -> Path | None:
    """The folder of the recipe file, or ``None`` for text that came from no file."""
    return None if source.startswith("<") else Path(source).parent


def upload_roots(compiled: CompiledRecipe) -> tuple[str, ...]:
    """The folders the recipe's files may come from: its own, then those the user named."""
    own = recipe_dir(compiled.source)
    return (*(() if own is None else (str(own.resolve()),)), *compiled.files_dirs)


def _check_file_params(recipe: Recipe, values: Mapping[str, Any], roots: tuple[str, ...]) -> None:
    """Every file parameter's value lies inside ``roots`` (its path resolved, links too)."""
    for name, param in recipe.params.items():
        path = values.get(name)
        if param.type == "file" and path and allowed_upload(str(path), roots) is None:
            raise upload_refused(str(path), roots, where=f"parameter {name!r}")


def _render_value(value: Any, scope: Mapping[str, Any], key: str = "") -> Any:
    if isinstance(value, dict):
        return {
            k: (v if k in NOT_TEMPLATED else _render_value(v, scope, k)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_render_value(v, scope, key) for v in value]
    if isinstance(value, str) and key not in REGEX_FIELDS:
        return render_url(value, scope) if key in URL_FIELDS else render(value, scope)
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
            render_url(tab.start, scope), base_url, f"tab {role!r} start", path + ".start"
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
    roots: tuple[str, ...],
) -> BoundStep:
    recipe = compiled.recipe
    rendered = _render_model(step, scope)
    if rendered.upload is not None:
        where = f"steps[{index}].upload"
        files = [_upload_path(f, compiled.source, roots, where) for f in rendered.upload.files]
        rendered = rendered.model_copy(
            update={"upload": rendered.upload.model_copy(update={"files": files})}
        )
    rendered = _resolve_gotos(rendered, tabs[step.tab].start, f"steps[{index}]")
    opens = next((r for r, t in tabs.items() if t.opened_by == step.id), None)
    return BoundStep(
        index=index,
        step=rendered,
        timeout_ms=step.timeout or recipe.timeout,
        retry=step.retry or recipe.retry or RetryPolicy(),
        opens_tab=opens,
        input_fingerprint=input_fingerprint(recipe, rendered, scope) if step.effect else "",
        line=compiled.step_lines[index] if compiled.step_lines else None,
    )


def _resolve_gotos(step: Step, start: str | None, path: str) -> Step:
    """Relative ``goto``s (the step's, its probes', its ``after_submit``) against the start.

    A popup role has no start: its relative gotos are resolved against the page's URL
    by the adapter.
    """
    if start is None:
        return step
    update: dict[str, Any] = {}
    if step.goto is not None:
        update["goto"] = _join(start, step.goto, path + ".goto")
    if step.after_submit:
        update["after_submit"] = _join(start, step.after_submit, path + ".after_submit")
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


def _upload_path(path: str, source: str, roots: tuple[str, ...], where: str) -> str:
    """An upload path as absolute (a relative one is read from the recipe's folder), inside
    the folders uploads may come from."""
    file = existing_file(path, recipe_dir(source))
    if file is None:
        raise ParamInvalid(
            f"upload file {path!r} does not exist", fix="Pass the path of an existing file."
        )
    if allowed_upload(file, roots) is None:
        raise upload_refused(path, roots, where=where)
    return str(file)
