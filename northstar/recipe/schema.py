"""The JSON Schema of the recipe format, for editors (``northstar schema``).

It is pydantic's schema of ``Recipe`` with what an editor needs on top: the draft and an
id, the rules the models check in code written into the schema itself (exactly one step
kind, locator kind and check kind, ``oneOf``), the ARIA roles as an enum, and examples.
The models stay the one authority: a file the schema accepts can still fail ``validate``
(templates, tab roles, step ids), never the other way round for the rules written here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from northstar.recipe.model import CHECK_KINDS, STEP_KINDS, TARGET_LOCATORS, Recipe

__all__ = ["ARIA_ROLES", "SCHEMA_DRAFT", "SCHEMA_ID", "recipe_json_schema"]

SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"
# An identifier, not an address: nothing is fetched from it.
SCHEMA_ID = "urn:northstar:recipe:schema:1"

# The roles Playwright's get_by_role accepts (its AriaRole type; a test pins the list).
ARIA_ROLES = (
    "alert", "alertdialog", "application", "article", "banner", "blockquote", "button",
    "caption", "cell", "checkbox", "code", "columnheader", "combobox", "complementary",
    "contentinfo", "definition", "deletion", "dialog", "directory", "document", "emphasis",
    "feed", "figure", "form", "generic", "grid", "gridcell", "group", "heading", "img",
    "insertion", "link", "list", "listbox", "listitem", "log", "main", "marquee", "math",
    "menu", "menubar", "menuitem", "menuitemcheckbox", "menuitemradio", "meter",
    "navigation", "none", "note", "option", "paragraph", "presentation", "progressbar",
    "radio", "radiogroup", "region", "row", "rowgroup", "rowheader", "scrollbar", "search",
    "searchbox", "separator", "slider", "spinbutton", "status", "strong", "subscript",
    "superscript", "switch", "tab", "table", "tablist", "tabpanel", "term", "textbox",
    "time", "timer", "toolbar", "tooltip", "tree", "treegrid", "treeitem",
)  # fmt: skip

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
    generated = Recipe.model_json_schema(by_alias=True)
    defs = generated["$defs"]
    _exactly_one(defs["Step"], STEP_KINDS)
    _exactly_one(defs["Target"], TARGET_LOCATORS)
    _exactly_one(defs["Check"], CHECK_KINDS)
    _exactly_one(defs["SelectAction"], ("value", "label", "values"))
    _exactly_one(defs["TabRole"], ("start", "opened_by"))
    defs["Target"]["dependentRequired"] = {"name": ["role"]}
    role = defs["Target"]["properties"]["role"]
    role["anyOf"] = [{"enum": list(ARIA_ROLES)}, {"type": "null"}]
    for name, examples in _EXAMPLES.items():
        defs[name]["examples"] = examples
    return {"$schema": SCHEMA_DRAFT, "$id": SCHEMA_ID, **generated, "examples": [_RECIPE_EXAMPLE]}


def _exactly_one(definition: dict[str, Any], keys: Sequence[str]) -> None:
    """``oneOf``: exactly one of ``keys`` is present with a value (``null`` counts as absent)."""
    definition["oneOf"] = [
        {"required": [key], "properties": {key: {"not": {"type": "null"}}}} for key in keys
    ]
