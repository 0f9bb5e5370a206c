"""A recipe as an agent reads it: compact plain data, one line per step, never a secret.

``program_brief`` is a line of ``list_programs``; ``program_detail`` is the answer of
``describe_program``. Both describe the recipe as written (templates unrendered), so no
parameter value, secret or not, can appear; a secret parameter's default is left out
because it is a value.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from northstar.plan.model import CompiledRecipe
from northstar.recipe.model import (
    Check,
    ExtractAction,
    FieldValueCheck,
    FillAction,
    Output,
    Param,
    PressAction,
    SelectAction,
    Step,
    TabRole,
    TargetAction,
    UploadAction,
)

__all__ = ["check_line", "param_spec", "program_brief", "program_detail", "step_line"]


def param_spec(param: Param) -> dict[str, Any]:
    """Type, required, secret, choices, default (unless secret), description; no padding."""
    spec: dict[str, Any] = {"type": param.type, "required": param.required}
    if param.secret:
        spec["secret"] = True
    if param.choices is not None:
        spec["choices"] = list(param.choices)
    if param.default is not None and not param.secret:
        spec["default"] = param.default
    if param.description:
        spec["description"] = param.description
    return spec


def _tab_spec(tab: TabRole) -> dict[str, Any]:
    spec: dict[str, Any] = {"start": tab.start} if tab.start is not None else {}
    if tab.opened_by is not None:
        spec["opened_by"] = tab.opened_by
    if tab.origins:
        spec["origins"] = list(tab.origins)
    return spec


def _target_action(body: TargetAction) -> str:
    return body.target.describe()


def _fill(body: FillAction) -> str:
    return f"{body.target.describe()} = {body.value!r}"


def _select(body: SelectAction) -> str:
    choice = body.value if body.value is not None else body.label
    return f"{body.target.describe()} = {body.values if body.values is not None else choice!r}"


def _press(body: PressAction) -> str:
    return body.key + (f" on {body.target.describe()}" if body.target is not None else "")


def _upload(body: UploadAction) -> str:
    return f"{body.target.describe()} <- {', '.join(body.files)}"


def _verify_field(body: FieldValueCheck) -> str:
    return f"{body.target.describe()} equals {body.equals!r}"


def _extract(body: ExtractAction) -> str:
    where = f" of {body.target.describe()}" if body.target is not None else ""
    return f"{body.as_} from {body.source}{where}" + (f" /{body.regex}/" if body.regex else "")


_STEP_BODIES: dict[str, Callable[[Any], str]] = {
    "goto": str,
    "click": _target_action,
    "check": _target_action,
    "uncheck": _target_action,
    "hover": _target_action,
    "fill": _fill,
    "select": _select,
    "press": _press,
    "upload": _upload,
    "wait_for": Check.describe,
    "verify_outcome": Check.describe,
    "verify_field": _verify_field,
    "extract": _extract,
}


def check_line(check: Check) -> str:
    """A check in words, with its tab when it names one (``done_when`` always does)."""
    return (f"[{check.tab}] " if check.tab else "") + check.describe()


def step_line(step: Step) -> str:
    """``id [tab] kind what; submit; expect ...``: one line per step."""
    line = f"{step.id} [{step.tab}] {step.kind} {_STEP_BODIES[step.kind](getattr(step, step.kind))}"
    if step.effect == "submit":
        line += "; submit (at most once" + ("; reconcile probe)" if step.reconcile else ")")
    if step.expect:
        line += "; expect " + ", ".join(check_line(check) for check in step.expect)
    return line


def _output_line(output: Output) -> str:
    where = f" of {output.target.describe()}" if output.target is not None else ""
    return f"[{output.tab}] {output.source}{where}" + (f" /{output.regex}/" if output.regex else "")


def program_brief(compiled: CompiledRecipe, path: Path) -> dict[str, Any]:
    """One entry of ``list_programs``: enough to choose; ``describe_program`` has the rest."""
    recipe = compiled.recipe
    return {
        "name": recipe.name,
        "version": recipe.version,
        "description": recipe.description.strip(),
        "path": str(path),
        "required": [name for name, param in recipe.params.items() if param.required],
        "needs_base_url": compiled.uses_base_url,
        "step_count": len(recipe.steps),
        "submits": sum(step.effect == "submit" for step in recipe.steps),
    }


def program_detail(compiled: CompiledRecipe, path: Path) -> dict[str, Any]:
    """What ``describe_program`` answers: params, tabs, steps, outputs, done_when, hash."""
    recipe = compiled.recipe
    return {
        **program_brief(compiled, path),
        "definition_hash": compiled.recipe_hash,
        "params": {name: param_spec(param) for name, param in recipe.params.items()},
        "tabs": {name: _tab_spec(tab) for name, tab in recipe.tabs.items()},
        "steps": [step_line(step) for step in recipe.steps],
        "outputs": {name: _output_line(output) for name, output in recipe.outputs.items()},
        "done_when": [check_line(check) for check in recipe.done_when],
    }
