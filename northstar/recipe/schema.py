"""The JSON Schema of the recipe format, for editors (``northstar schema``).

It is pydantic's schema of ``Recipe``, which carries every rule the models check (each
model writes its cross-field rules into its own schema, beside the validator, and the ARIA
roles are an enum there), with what an editor adds on top: the draft, an id and examples.
What the schema cannot say is what ``validate`` checks across the whole recipe: a step's
tab is declared, step ids are unique, templates name declared parameters, a submit step
says how it is verified. A new field or model needs no edit here.
"""

from __future__ import annotations

from typing import Any

from northstar.recipe.model import ARIA_ROLES, Recipe

__all__ = ["ARIA_ROLES", "SCHEMA_DRAFT", "SCHEMA_ID", "recipe_json_schema"]

SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"
# An identifier, not an address: nothing is fetched from it.
SCHEMA_ID = "urn:northstar:recipe:schema:1"

_RECIPE_EXAMPLE: dict[str, Any] = {
    "name": "publish-post",
    "params": {"title": {"type": "string", "required": True}},
    "tabs": {"admin": {"start": "{{ base_url }}/posts/new"}},
    "steps": [
        {"id": "title", "tab": "admin",
         "fill": {"target": {"label": "Title"}, "value": "{{ title }}"}},
        {
            "id": "publish",
            "tab": "admin",
            "click": {"target": {"role": "button", "name": "Publish"}},
            "effect": "submit",
            "expect": [{"visible": {"role": "link", "name": "{{ title }}"}}],
            "reconcile": [
                {"goto": "/posts?q={{ title }}"},
                {"check": {"visible": {"role": "link", "name": "{{ title }}"}}},
            ],
        },
    ],
    "done_when": [{"tab": "admin", "visible": {"role": "link", "name": "{{ title }}"}}],
}  # fmt: skip

_EXAMPLES: dict[str, list[Any]] = {
    "Target": [
        {"role": "button", "name": "Save"},
        {"label": "Email"},
        {"role": "link", "name": "Edit", "within": {"role": "row", "name": "Invoice 12"}},
        {"test_id": "checkout-submit"},
    ],
    "Step": _RECIPE_EXAMPLE["steps"],
    "Check": [
        {"visible": {"role": "heading", "name": "Thank you"}},
        {"url": "**/posts?created=*"},
        {"text": {"target": {"role": "status"}, "equals": "Saved"}},
    ],
    "Param": [{"type": "string", "required": True}, {"type": "string", "secret": True}],
    "TabRole": [
        {"start": "{{ base_url }}/admin/", "origins": ["{{ base_url }}"]},
        {"opened_by": "open-preview"},
    ],
}


def recipe_json_schema() -> dict[str, Any]:
    """The recipe format as a JSON Schema (draft 2020-12) an editor can check files with."""
    generated = _standard_bounds(Recipe.model_json_schema(by_alias=True))
    for name, examples in _EXAMPLES.items():
        generated["$defs"][name]["examples"] = examples
    return {"$schema": SCHEMA_DRAFT, "$id": SCHEMA_ID, **generated, "examples": [_RECIPE_EXAMPLE]}


_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _standard_bounds(node: Any) -> Any:
    """Pydantic writes a bound it cannot place (on an optional number) under its own name
    (``ge``), which JSON Schema ignores: renamed, the schema refuses what validate refuses."""
    if isinstance(node, list):
        return [_standard_bounds(item) for item in node]
    if not isinstance(node, dict):
        return node
    numeric = node.get("type") in ("integer", "number")
    return {
        (_BOUNDS[key] if numeric and key in _BOUNDS else key): _standard_bounds(value)
        for key, value in node.items()
    }
