"""The pure half of ``save_recipe``: a session's history drafted as recipe text, no browser."""

from __future__ import annotations

import pytest
import yaml

from northstar.agent.actions import act_request
from northstar.agent.dry_replay import dry_steps
from northstar.agent.recipe_draft import (
    ElementSeen,
    ExecutedAction,
    HeldCheck,
    draft_recipe,
    element_seen,
    record_action,
    url_glob,
)
from northstar.errors import RecipeInvalid
from northstar.monitor.observation import Node, Observation
from northstar.plan.compiler import compile_recipe
from northstar.plan.model import BoundTab
from northstar.recipe.loader import parse_recipe
from northstar.recipe.model import Check, Target

SITE = "http://127.0.0.1:8123"
TABS = {"main": BoundTab("main", f"{SITE}/start?x=1", None, (SITE, "http://other:9"))}


def action(kind: str = "click", **fields: object) -> ExecutedAction:
    base: dict[str, object] = {
        "tab": "main",
        "action": kind,
        "target": None,
        "element": ElementSeen("button", "Go"),
        "value": None,
        "submit": False,
        "url_before": f"{SITE}/a",
        "url_after": f"{SITE}/a",
    }
    return ExecutedAction(**(base | fields))  # type: ignore[arg-type]


def steps_of(text: str) -> list[dict[str, object]]:
    parse_recipe(text)  # the draft is a valid recipe
    steps: list[dict[str, object]] = yaml.safe_load(text)["steps"]
    return steps


def test_a_url_keeps_its_path_and_query_names_and_drops_what_varies() -> None:
    assert url_glob(f"{SITE}/posts/12?created=abc&q=") == "**/posts/*?created=*&q=*"
    assert url_glob(f"{SITE}/") == "**/"


def test_tabs_are_templated_on_the_site_origin_only() -> None:
    doc = yaml.safe_load(draft_recipe("t", TABS, [action()]).text)
    assert doc["tabs"] == {
        "main": {
            "start": "{{ base_url }}/start?x=1",
            "origins": ["{{ base_url }}", "http://other:9"],
        }
    }


def test_typed_values_become_parameters_and_lift_into_expectations() -> None:
    status = ({"visible": {"text": "Saved Fish & chips"}},)
    fill = action("fill", element=ElementSeen("textbox", "Dish name"), value="Fish & chips")
    drafted = draft_recipe("t", TABS, [fill, action(appeared=status)], renames={})
    assert drafted.params == {"dish_name": {"type": "string", "default": "Fish & chips"}}
    steps = steps_of(drafted.text)
    assert steps[0]["fill"] == {
        "target": {"role": "textbox", "name": "Dish name"},
        "value": "{{ dish_name }}",
    }
    assert steps[1]["expect"] == [{"visible": {"text": "Saved {{ dish_name }}"}}]


def test_a_sensitive_field_is_a_secret_parameter_and_its_value_is_never_kept() -> None:
    before = Observation(
        tab="main",
        url=f"{SITE}/login",
        snapshot_id="s1",
        nodes=(Node("textbox", "Password", ref="e3", sensitive=True),),
    )
    request = act_request("main", "fill", ref="e3", value="hunter2-secret")
    done = record_action(request, before.nodes[0], before, before)
    assert done.value is None
    by_adapter = act_request("main", "fill", target={"css": "#pw"}, value="hunter2-secret")
    seen = record_action(by_adapter, None, None, None, 'textbox "PIN" <input type=password>')
    assert (seen.value, seen.element) == (None, ElementSeen("textbox", "PIN", sensitive=True))
    drafted = draft_recipe("t", TABS, [done, seen])
    assert "hunter2" not in drafted.text
    assert drafted.params == {
        "password": {"type": "string", "secret": True, "required": True},
        "pin": {"type": "string", "secret": True, "required": True},
    }
    assert steps_of(drafted.text)[1]["fill"]["target"] == {"role": "textbox", "name": "PIN"}


def test_targets_are_role_and_name_scoped_when_alike_and_css_is_flagged() -> None:
    twins = Observation(
        tab="main",
        url=f"{SITE}/a",
        snapshot_id="s1",
        nodes=(
            Node("listitem", "Draft A", path=('listitem "Draft A"',)),
            Node("button", "Delete", ref="e1", path=('listitem "Draft A"', 'button "Delete"')),
            Node("listitem", "Draft B", path=('listitem "Draft B"',)),
            Node("button", "Delete", ref="e2", path=('listitem "Draft B"', 'button "Delete"')),
        ),
    )
    second = element_seen(twins, twins.nodes[3])
    assert second.within == ("listitem", "Draft B")
    css = action(element=None, target=Target(css="#go"))
    text = draft_recipe("t", TABS, [action(element=second), css]).text
    steps = steps_of(text)
    assert steps[0]["click"] == {
        "target": {
            "role": "button",
            "name": "Delete",
            "within": {"role": "listitem", "name": "Draft B"},
        }
    }
    assert steps[1]["click"] == {"target": {"css": "#go"}}
    assert "  # target by CSS" in text.split("  - id: click\n")[0].splitlines()[-1]


def test_checks_that_held_after_an_action_become_its_expectations() -> None:
    check = HeldCheck("main", Check.model_validate({"url": "**/done"}))
    typed = HeldCheck(
        "main", Check.model_validate({"value": {"target": {"label": "A"}, "equals": "x"}})
    )
    history = [check, action(submit=True, url_after=f"{SITE}/done?id=4"), check, typed]
    (step,) = steps_of(draft_recipe("t", TABS, history).text)
    assert step["effect"] == "submit"
    assert step["expect"] == [{"url": "**/done?id=*"}, {"url": "**/done"}]


def test_a_submission_with_nothing_to_expect_is_refused_by_name() -> None:
    with pytest.raises(RecipeInvalid, match="submission step 'click-go' has no expectation"):
        draft_recipe("t", TABS, [action(submit=True)])


def test_a_typed_value_is_lifted_only_where_it_stands_whole() -> None:
    checks = (
        {"visible": {"text": "Site administration"}},
        {"visible": {"text": "Welcome, admin."}},
        {"url": "**/admin/"},
    )
    fill = action("fill", element=ElementSeen("textbox", "Username"), value="admin")
    moved = action(url_before=f"{SITE}/login", url_after=f"{SITE}/admin/", appeared=checks[:2])
    steps = steps_of(draft_recipe("t", TABS, [fill, moved]).text)
    assert steps[1]["expect"] == [
        {"url": "**/admin/"},
        {"visible": {"text": "Site administration"}},
        {"visible": {"text": "Welcome, {{ username }}."}},
    ]


def test_a_submitted_value_shown_back_is_unique_per_iteration_and_others_are_not() -> None:
    title = action("fill", element=ElementSeen("textbox", "Title"), value="Spring notes")
    email = action("fill", element=ElementSeen("textbox", "Email"), value="ada@example.com")
    shown = ({"visible": {"text": "The post “Spring notes” was added."}},)
    save = action(submit=True, appeared=shown)
    drafted = draft_recipe("t", TABS, [title, email, save])
    steps = steps_of(drafted.text)
    assert steps[0]["fill"]["value"] == "{{ title }} {{ iteration }}"  # type: ignore[index]
    assert steps[1]["fill"]["value"] == "{{ email }}"  # type: ignore[index]
    assert steps[2]["expect"] == [
        {"visible": {"text": "The post “{{ title }} {{ iteration }}” was added."}}
    ]
    assert "each iteration appends its number" in drafted.reasons["title"]
    assert "iteration" not in drafted.reasons["email"]


def test_a_button_named_by_its_child_is_named_by_that_text() -> None:
    path = ("main", "button")
    observation = Observation(
        tab="main",
        url=f"{SITE}/edit",
        snapshot_id="s1",
        nodes=(
            Node(role="main", path=("main",)),
            Node(role="button", ref="e1", path=path),
            Node(role="emphasis", ref="e2", value="Save draft", path=(*path, "emphasis")),
            Node(role="button", ref="e3", path=path),
            Node(role="emphasis", ref="e4", value="Publish", path=(*path, "emphasis")),
        ),
    )
    seen = element_seen(observation, observation.nodes[3])
    assert (seen.role, seen.name, seen.unique) == ("button", "Publish", True)


def test_a_dry_replay_acts_up_to_the_first_submission_and_only_resolves_it() -> None:
    drafted = draft_recipe(
        "t",
        TABS,
        [action(), action(submit=True, appeared=({"visible": {"text": "Sent"}},)), action()],
    )
    plan = compile_recipe(parse_recipe(drafted.text), {}, base_url=SITE)
    chosen = dry_steps(plan.steps)
    assert [s.id for s in chosen.acted] == ["click-go"]
    assert chosen.submission is not None
    assert chosen.submission.id == "click-go-2"
    assert dry_steps(plan.steps[:1]).submission is None


def test_a_target_that_cannot_be_made_unique_is_reported_with_where_each_element_is() -> None:
    observation = Observation(
        tab="main",
        url=f"{SITE}/admin/",
        snapshot_id="s1",
        nodes=(
            Node(role="row", path=("table", "row")),
            Node(role="link", name="Add", ref="e1", path=("table", "row", 'link "Add"')),
            Node(role="row", path=("table", "row")),
            Node(role="link", name="Add", ref="e2", path=("table", "row", 'link "Add"')),
        ),
    )
    seen = element_seen(observation, observation.nodes[1])
    assert not seen.unique
    assert seen.within is None
    assert seen.alike == ('table > row > link "Add"', 'table > row > link "Add"')
    drafted = draft_recipe("t", TABS, [action(element=seen)])
    assert drafted.not_unique == {"click-add": list(seen.alike)}
    assert "# TODO: several elements" in drafted.text
