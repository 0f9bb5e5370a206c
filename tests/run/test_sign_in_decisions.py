"""The sign-in rules as plain logic: when setup runs again, and what a recipe may declare."""

from __future__ import annotations

import pytest

from northstar.errors import RecipeInvalid
from northstar.plan.compiler import prepare
from northstar.recipe.loader import parse_recipe
from northstar.run.identity import RunIdentity, run_identity
from northstar.run.signin import SignInMove, check_plan, next_move, setup_plan


@pytest.mark.parametrize(
    ("holds", "has_setup", "setups_run", "move"),
    [
        (True, True, 0, SignInMove.USE),
        (True, False, 0, SignInMove.USE),
        (False, True, 0, SignInMove.SET_UP),  # expired: sign in again, once
        (False, True, 1, SignInMove.FAIL),  # still not signed in after setup: stop
        (False, False, 0, SignInMove.FAIL),  # a saved state that expired, nothing to redo it
    ],
)
def test_setup_runs_again_once_then_the_run_stops(
    holds: bool, has_setup: bool, setups_run: int, move: SignInMove
) -> None:
    assert next_move(holds=holds, has_setup=has_setup, setups_run=setups_run) is move


RECIPE = """
name: walled
params:
  password: {type: string, secret: true, required: true}
tabs:
  site: {start: "{{ base_url }}/members/notes"}
setup:
  - id: password
    tab: site
    fill: {target: {label: Password}, value: "{{ password }}"}
  - id: sign-in
    tab: site
    click: {target: {role: button, name: Sign in}}
signed_in:
  - {tab: site, visible: {role: button, name: Log out}}
steps:
  - id: look
    tab: site
    verify_outcome: {visible: {role: heading, name: Notes}}
"""


def compiled(text: str = RECIPE):  # type: ignore[no-untyped-def]
    return prepare(parse_recipe(text, source="<test>"), source="<test>")


def test_setup_is_a_plan_of_its_own_checked_by_signed_in_and_holding_the_secret() -> None:
    plan = setup_plan(compiled(), {"password": "pw-123456"}, "http://127.0.0.1:9")
    assert plan is not None
    assert [s.id for s in plan.steps] == ["password", "sign-in"]
    assert len(plan.done_when) == 1
    assert plan.outputs == ()
    assert plan.secrets == frozenset({"pw-123456"})  # redacted in logs while setup runs


def test_signed_in_is_a_plan_of_passive_checks_on_the_tab_start() -> None:
    plan = check_plan(compiled(), {"password": "x"}, "http://127.0.0.1:9")
    assert plan is not None
    assert [(s.id, s.kind) for s in plan.steps] == [("signed-in-1", "verify_outcome")]
    assert plan.tabs["site"].start == "http://127.0.0.1:9/members/notes"


def test_a_recipe_without_setup_has_no_sign_in_plans() -> None:
    text = RECIPE.split("setup:")[0] + "steps:" + RECIPE.split("steps:")[1]
    assert setup_plan(compiled(text), {"password": "x"}, None) is None
    assert check_plan(compiled(text), {"password": "x"}, None) is None


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (("    click: {target: {role: button, name: Sign in}}\n",
          "    click: {target: {role: button, name: Sign in}}\n    effect: submit\n"
          "    expect: [{url: '**'}]\n"), "setup[1].effect"),
        (("  - id: sign-in\n    tab: site", "  - id: sign-in\n    tab: nowhere"), "setup[1].tab"),
        (("  - id: sign-in\n", "  - id: password\n"), "setup[1].id"),
        (("  - {tab: site, visible", "  - {visible"), "signed_in[0].tab"),
    ],
)  # fmt: skip
def test_validate_names_the_setup_mistake(change: tuple[str, str], path: str) -> None:
    with pytest.raises(RecipeInvalid) as refused:
        compiled(RECIPE.replace(*change))
    assert path in str(refused.value.context.get("path", "")) + refused.value.message


def test_a_saved_state_wins_over_a_profile_and_setup_marks_its_own_as_held(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert run_identity(None, None) == RunIdentity()
    chosen = run_identity(str(tmp_path / "profile.json"), str(tmp_path / "state.json"))
    assert chosen.storage_state == str(tmp_path / "state.json")
    assert not chosen.held
    held = chosen.signed_in_with(tmp_path / "lane.json")
    assert held.held
    assert held.storage_state == str(tmp_path / "lane.json")
