"""Codegen scripts to recipes, without a browser: every construct, secrets, submissions, comments.

The recordings under ``recordings/`` are shaped exactly as ``playwright codegen --target
python-async`` writes them; ``test_codegen_browser.py`` runs what they convert to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from northstar.authoring import import_codegen
from northstar.errors import RecipeInvalid, UsageInvalid
from northstar.plan.compiler import prepare
from northstar.recipe.loader import parse_recipe, parse_recipe_positions
from northstar.recipe.model import Recipe

RECORDINGS = Path(__file__).parent / "recordings"
HEAD = """import asyncio
import re
from playwright.async_api import Playwright, async_playwright, expect


async def run(playwright: Playwright) -> None:
    browser = await playwright.chromium.launch(headless=False)
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto("http://127.0.0.1:8000/form")
"""
TAIL = """
    await context.close()
    await browser.close()


asyncio.run(main())
"""


def script(*lines: str) -> str:
    return HEAD + "".join(f"    {line}\n" for line in lines) + TAIL


def converted(name: str) -> tuple[str, Recipe]:
    text = import_codegen((RECORDINGS / name).read_text(), name="rec", source=name).text
    recipe, positions = parse_recipe_positions(text)
    prepare(recipe, positions=positions)  # every static check `northstar validate` makes
    return text, recipe


def step(recipe: Recipe, step_id: str) -> dict[str, Any]:
    found = next(s for s in recipe.steps if s.id == step_id)
    return found.model_dump(exclude_defaults=True, by_alias=True)


def test_targets_and_steps_of_every_kind_convert_and_validate() -> None:
    text, recipe = converted("playground_and_popup.py")
    assert step(recipe, "click-double-me")["click"] == {
        "target": {"test_id": "double-me"},
        "count": 2,
    }
    assert step(recipe, "hover-help-text")["hover"] == {"target": {"css": '[title="Help text"]'}}
    assert step(recipe, "press-enter-search-drafts")["press"] == {
        "key": "Enter",
        "target": {"placeholder": "Search drafts"},
    }
    assert step(recipe, "press-tab")["press"] == {"key": "Tab"}
    assert step(recipe, "click-open")["click"]["target"] == {
        "role": "button",
        "name": "Open",
        "within": {"text": "Draft B", "exact": False},
    }
    assert step(recipe, "check-notify")["check"] == {"target": {"css": "#notify"}}
    assert step(recipe, "select-colour")["select"]["value"] == "{{ colour }}"
    assert recipe.params["colour"].default == "green"
    checks = [c.model_dump(exclude_defaults=True) for c in recipe.steps[3].expect]
    assert checks == [
        {"visible": {"text": "Hover help shown", "exact": False}},  # as codegen matches text
        {"visible": {"role": "img", "name": "Northstar logo"}},  # get_by_alt_text
    ]
    assert text.count("# lint: css target") == 2  # the title target and #notify
    # The typed value inside a later expectation becomes its parameter.
    assert step(recipe, "press-enter-search-drafts")["expect"][0]["text"]["equals"] == (
        "Searching for {{ search_drafts }}"
    )


def test_a_popup_is_a_tab_role_opened_by_the_step_in_its_block() -> None:
    _, recipe = converted("playground_and_popup.py")
    assert recipe.tabs["page"].start == "{{ base_url }}/codegen"
    assert recipe.tabs["page1"].opened_by == "click-open-chooser"
    assert recipe.tabs["page1"].origins == ["{{ base_url }}"]
    opener = step(recipe, "click-open-chooser")
    assert opener["expect"] == [{"tab": "page1", "url": "**/popup/child"}]
    assert "effect" not in opener  # opening a popup is not a submission
    apply = step(recipe, "click-apply")
    assert apply["effect"] == "submit"
    assert apply["expect"][1] == {
        "tab": "page",
        "text": {"target": {"role": "status"}, "equals": "Chosen colour: Green"},
    }


def test_a_password_is_a_secret_parameter_and_its_value_is_never_written() -> None:
    text, recipe = converted("sign_in_and_contact.py")
    assert recipe.params["password"].secret
    assert recipe.params["password"].default is None
    assert recipe.params["username"].default == "demo"
    assert "demo-password" not in text
    sign_in = step(recipe, "click-sign-in")
    assert sign_in["effect"] == "submit"
    assert sign_in["expect"][0] == {"url": "**/account"}
    send = step(recipe, "click-send")
    assert send["expect"][0] == {"url": "**/form/thanks?id=*"}  # the id differs per run
    assert send["expect"][1]["text"]["contains"] == "received from {{ name }}"


@pytest.mark.parametrize(
    "field",
    [
        'get_by_label("Password")',
        'get_by_role("textbox", name="Passcode")',
        'locator("input[type=password]")',
    ],
)
def test_every_kind_of_password_field_keeps_its_value_out(field: str) -> None:
    text = import_codegen(
        script(
            f'await page.{field}.fill("s3cr3t&value")',
            f'await expect(page.{field}).to_have_value("s3cr3t&value")',
            'await page.mouse.type("s3cr3t&value")',
            'await page.goto("http://127.0.0.1:8000/check?token=s3cr3t%26value")',
            'await page.goto("http://127.0.0.1:8000/s3cr3t&value/again")',
            'await expect(page).to_have_url("http://127.0.0.1:8000/s3cr3t&value/done")',
            'await page.get_by_role("button", name="Sign in").click()',
            'await expect(page).to_have_url("http://127.0.0.1:8000/account")',
        ),
        name="secret",
    ).text
    assert "s3cr3t" not in text
    recipe = parse_recipe(text)
    assert [p.secret for p in recipe.params.values()] == [True]


def test_unknown_constructs_are_kept_as_comments_with_their_line() -> None:
    imported = import_codegen(
        script(
            'await page.get_by_label("Name").fill("Ada")',
            "print('hello')",
            'await page.get_by_role("button", name=re.compile("Se.d")).click()',
            "for _ in range(2):",
            '    await page.get_by_label("Name").press("Tab")',
            'await page.get_by_role("button", name="Send").click()',
            'await expect(page.get_by_text("Thank you")).to_be_visible()',
        ),
        name="unknown",
    )
    text = imported.text
    assert imported.kept_as_comments == (12, 13, 14)
    assert "# codegen line 12: print('hello')" in text
    assert (
        '# codegen line 13: await page.get_by_role("button", name=re.compile("Se.d")).click()'
        in text
    )
    assert "# codegen line 14: for _ in range(2):" in text
    parse_recipe(text)  # comments only: the recipe still loads


def test_a_submission_without_expectations_gets_a_todo_and_does_not_validate() -> None:
    imported = import_codegen(
        script(
            'await page.get_by_label("Name").fill("Ada")',
            'await page.get_by_role("button", name="Send").click()',
        ),
        name="todo",
    )
    assert imported.submissions_without_expect == ("click-send",)
    assert "# TODO: add `expect:`" in imported.text
    with pytest.raises(RecipeInvalid, match="expect"):
        prepare(parse_recipe(imported.text))


def test_a_typed_form_followed_by_a_new_url_is_a_submission_whatever_the_button_says() -> None:
    imported = import_codegen(
        script(
            'await page.get_by_label("Name").fill("Ada")',
            'await page.get_by_role("button", name="Continue").click()',
            'await expect(page).to_have_url("http://127.0.0.1:8000/next?step=2")',
            'await page.get_by_role("link", name="Continue").click()',
            'await expect(page).to_have_url("http://127.0.0.1:8000/next?step=3")',
        ),
        name="nav",
    )
    first, second = parse_recipe(imported.text).steps[1:]
    assert (first.effect, second.effect) == ("submit", None)  # no typing before the second


def test_chains_nest_as_within_and_picks_among_several_are_flagged() -> None:
    imported = import_codegen(
        script(
            'await page.get_by_role("navigation", name="Main")'
            '.get_by_role("button", name="Menu").click()',
            'await page.get_by_role("button", name="Delete").nth(1).click()',
            'await page.frame_locator("#pay").get_by_label("Card").fill("4242")',
        ),
        name="chains",
    )
    steps = parse_recipe(imported.text).steps
    assert steps[0].click is not None
    assert steps[0].click.target.within is not None
    assert steps[0].click.target.within.name == "Main"
    assert steps[1].click is not None
    assert steps[1].click.target.name == "Delete"
    assert "# lint: codegen picked .nth(1) of several matches" in imported.text
    assert steps[2].fill is not None
    assert steps[2].fill.target.frame == "#pay"


def test_a_file_that_is_not_a_codegen_script_is_refused_in_one_line() -> None:
    with pytest.raises(UsageInvalid, match="no `async def run"):
        import_codegen("print('hello')\n", name="x")
    with pytest.raises(UsageInvalid, match="not valid Python"):
        import_codegen("async def run(:\n", name="x")


def test_a_real_recording_keeps_the_password_out_and_asks_for_checks_of_its_submissions() -> None:
    # Recorded with the real `northstar codegen` under Xvfb, driven by the keyboard.
    script = (RECORDINGS / "recorded_sign_in.py").read_text()
    imported = import_codegen(script, name="real", source="recorded_sign_in.py")
    assert "demo-password" not in imported.text
    assert imported.secret_params == ("password",)
    # Enter in the password field submits the form; Enter on "Send" too: both need checks.
    assert imported.submissions_without_expect == ("press-enter-password", "press-enter-send")
    assert imported.text.count("# TODO: add `expect:`") == 2


def test_the_tutorial_example_is_what_import_codegen_writes_for_its_script() -> None:
    tutorial = (Path(__file__).parents[2] / "docs" / "tutorials" / "from-codegen.md").read_text()
    recording = tutorial.split('```python title="example.py"\n', 1)[1].split("```", 1)[0]
    recipe = tutorial.split('```yaml title="recipes/example.yaml"\n', 1)[1].split("```", 1)[0]
    assert import_codegen(recording, name="example", source="example.py").text == recipe


def test_a_click_option_with_no_recipe_field_is_kept_as_a_comment_beside_the_click() -> None:
    imported = import_codegen(
        script('await page.get_by_role("link", name="Docs").click(modifiers=["Shift"])'),
        name="modifiers",
    )
    [click] = parse_recipe(imported.text).steps
    assert click.click is not None
    assert click.click.target.name == "Docs"
    assert "(modifiers not kept)" in imported.text
    assert imported.kept_as_comments == (11,)
