"""Exact names by default, an explicit loose form, and no loose target on a submission.

Static checks only: ``validate`` (``prepare``) rejects a submit step whose target matches
by substring unless the step opts in, with an error that points at the line.
"""

from __future__ import annotations

import json

import pytest

from northstar.errors import RecipeInvalid
from northstar.plan.compiler import prepare
from northstar.recipe.loader import parse_recipe, parse_recipe_positions
from northstar.recipe.model import Recipe, Target

HEAD = """\
name: demo
tabs:
  site: {start: "http://127.0.0.1:1/"}
steps:
"""


def submit_step(target: str, *, extra: str = "") -> str:
    """A recipe whose one step submits by clicking ``target``; ``extra`` adds step keys."""
    return HEAD + (
        "  - id: send\n"
        "    tab: site\n"
        "    click:\n"
        f"      target: {target}\n"
        f"    effect: submit{extra}\n"
        "    expect:\n"
        '      - url: "**/done"\n'
    )


def rejected(text: str) -> RecipeInvalid:
    recipe, positions = parse_recipe_positions(text, source="demo.yaml")
    with pytest.raises(RecipeInvalid) as caught:
        prepare(recipe, source="demo.yaml", positions=positions)
    return caught.value


def test_a_target_is_exact_unless_it_says_otherwise() -> None:
    assert Target(role="button", name="Submit").exact is True
    assert Target(text="Page 1 of", exact=False).is_loose
    assert not Target(role="button", name="Send").is_loose
    assert Target(role="button", name="Delete", within=Target(text="Draft", exact=False)).is_loose


def test_a_loose_target_says_so_when_described() -> None:
    assert Target(role="button", name="Send").describe() == 'button "Send"'
    assert Target(label="Name", exact=False).describe() == 'label "Name" (substring, any case)'


@pytest.mark.parametrize(
    "target",
    [
        "{css: '#send', exact: false}",
        "{test_id: send, exact: false}",
        "{role: button, exact: false}",
    ],
)
def test_exact_false_without_a_name_or_text_is_refused(target: str) -> None:
    with pytest.raises(RecipeInvalid) as caught:
        parse_recipe(HEAD + f"  - {{id: a, tab: site, click: {{target: {target}}}}}\n")
    assert "`exact: false` loosens only" in caught.value.message


def test_a_loose_submit_target_is_rejected_at_its_line() -> None:
    error = rejected(submit_step("{role: button, name: Submit, exact: false}"))
    assert error.context["path"] == "steps[0].click.target.exact"
    assert (error.context["line"], error.context["column"]) == (8, 44)  # at `exact: false`
    assert 'loose target (button "Submit" (substring, any case))' in error.message
    assert "allow_loose_target: true" in error.fix


def test_a_loose_scope_of_a_submit_target_is_rejected_too() -> None:
    target = "{role: button, name: Send, within: {text: Contact, exact: false}}"
    error = rejected(submit_step(target))
    assert error.context["path"] == "steps[0].click.target.within.exact"


def test_a_loose_submit_target_is_accepted_with_the_opt_in() -> None:
    text = submit_step(
        "{role: button, name: Submit, exact: false}", extra="\n    allow_loose_target: true"
    )
    compiled = prepare(parse_recipe(text), source="demo.yaml")
    assert compiled.recipe.steps[0].allow_loose_target


def test_loose_targets_are_fine_on_steps_that_do_not_submit() -> None:
    text = (
        HEAD + "  - {id: a, tab: site, click: {target: {role: link, name: Next, exact: false}}}\n"
    )
    prepare(parse_recipe(text), source="demo.yaml")


def test_the_opt_in_is_refused_where_nothing_is_submitted() -> None:
    text = HEAD + (
        "  - {id: a, tab: site, allow_loose_target: true,"
        " click: {target: {role: link, name: Next, exact: false}}}\n"
    )
    error = rejected(text)
    assert error.context["path"] == "steps[0].allow_loose_target"


def test_the_schema_documents_exact_matching_and_the_opt_in() -> None:
    schema = json.dumps(Recipe.model_json_schema(by_alias=True))
    assert "true (default): `name`, `label`, `placeholder` or `text` must equal the whole" in schema
    assert "allow_loose_target" in schema
