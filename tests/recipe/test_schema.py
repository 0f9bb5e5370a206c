"""The editor schema (``northstar schema``) accepts every shipped recipe and enforces the
rules the models check in code: one step kind, one locator kind, known ARIA roles.

Checked with ``jsonschema``'s draft 2020-12 validator, as an editor would check a file.
"""

from __future__ import annotations

import copy
import functools
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from playwright.async_api import Page

from northstar.recipe.loader import parse_recipe
from northstar.recipe.schema import ARIA_ROLES, SCHEMA_DRAFT, recipe_json_schema
from tests.conftest import RECIPES

SHIPPED = sorted(RECIPES.glob("*.yaml"))
SCHEMA_LINE = "# yaml-language-server: $schema=../.northstar/recipe.schema.json"


@functools.cache  # one schema and validator for the module: building them takes a while
def validator() -> jsonschema.Draft202012Validator:
    schema = recipe_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)  # the schema itself is well formed
    return jsonschema.Draft202012Validator(schema)


def minimal(step: dict[str, Any]) -> dict[str, Any]:
    return {"name": "x", "tabs": {"site": {"start": "/"}}, "steps": [step]}


def test_the_schema_names_its_draft_and_id() -> None:
    schema = recipe_json_schema()
    assert schema["$schema"] == SCHEMA_DRAFT == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("urn:northstar:recipe")
    validator().validate(schema["examples"][0])  # its own example is a valid recipe
    assert parse_recipe(yaml.safe_dump(schema["examples"][0])).name == "publish-post"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_recipe_is_valid_against_the_schema(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == SCHEMA_LINE
    errors = list(validator().iter_errors(yaml.safe_load(text)))
    assert errors == [], [f"{list(e.absolute_path)}: {e.message}" for e in errors]


def test_the_loader_ignores_the_schema_line() -> None:
    text = (RECIPES / "login.yaml").read_text(encoding="utf-8")
    without = text.replace(SCHEMA_LINE + "\n", "")
    assert without != text
    assert parse_recipe(text) == parse_recipe(without)


def test_every_field_has_a_description() -> None:
    schema = recipe_json_schema()
    models = {"Recipe": schema, **schema["$defs"]}
    missing = [
        f"{model}.{name}"
        for model, definition in models.items()
        for name, field in definition.get("properties", {}).items()
        if not field.get("description")
    ]
    assert missing == []
    assert all(definition.get("description") for definition in schema["$defs"].values())


def test_a_step_with_two_kinds_is_rejected() -> None:
    two = {"id": "a", "tab": "site", "goto": "/x", "click": {"target": {"label": "Go"}}}
    assert not validator().is_valid(minimal(two))
    assert validator().is_valid(minimal({"id": "a", "tab": "site", "goto": "/x"}))
    assert not validator().is_valid(minimal({"id": "a", "tab": "site"}))  # and none


def test_a_target_with_no_locator_or_two_is_rejected() -> None:
    def click(target: dict[str, Any]) -> dict[str, Any]:
        return minimal({"id": "a", "tab": "site", "click": {"target": target}})

    assert not validator().is_valid(click({}))
    assert not validator().is_valid(click({"frame": "pay", "exact": False}))
    assert not validator().is_valid(click({"label": "Email", "test_id": "email"}))
    assert not validator().is_valid(click({"name": "Save"}))  # a name goes with a role
    assert validator().is_valid(click({"role": "button", "name": "Save"}))


def test_an_unknown_role_is_rejected() -> None:
    def click(role: str) -> dict[str, Any]:
        return minimal({"id": "a", "tab": "site", "click": {"target": {"role": role}}})

    assert not validator().is_valid(click("buton"))
    assert validator().is_valid(click("button"))


def test_a_check_with_two_kinds_is_rejected() -> None:
    step = {"id": "a", "tab": "site", "goto": "/x", "expect": [{"url": "**/x", "title": {}}]}
    assert not validator().is_valid(minimal(step))


def test_the_roles_are_playwrights() -> None:
    role = typing.get_type_hints(Page.get_by_role)["role"]
    assert set(ARIA_ROLES) == set(typing.get_args(role))


def test_numbers_where_text_is_meant_are_accepted_as_the_loader_does() -> None:
    recipe = minimal({"id": "a", "tab": "site", "fill": {"target": {"label": "Qty"}, "value": 4}})
    assert validator().is_valid(recipe)
    parse_recipe(yaml.safe_dump(recipe))
    wrong = copy.deepcopy(recipe)
    wrong["steps"][0]["fill"]["value"] = True  # the loader refuses a YAML boolean too
    assert not validator().is_valid(wrong)
