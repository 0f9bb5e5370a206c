"""The loader: YAML text -> ``Recipe``, every failure a ``RecipeInvalid`` with a place."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from northstar.errors import RecipeInvalid
from northstar.recipe.loader import MAX_RECIPE_BYTES, format_path, load_recipe, parse_recipe
from northstar.recipe.model import Recipe

PYDANTIC_DUMP_MARKERS = ("validation error for", "For further information visit", "pydantic")

VALID = """\
name: demo
tabs:
  main:
    start: http://127.0.0.1/
steps:
  - id: open
    tab: main
    goto: /
  - id: press
    tab: main
    click:
      target:
        role: button
        name: Go
"""


def invalid(text: str, source: str = "demo.yaml") -> RecipeInvalid:
    with pytest.raises(RecipeInvalid) as caught:
        parse_recipe(textwrap.dedent(text), source=source)
    error = caught.value
    for marker in PYDANTIC_DUMP_MARKERS:
        assert marker not in str(error)
        assert marker not in error.fix
    return error


def test_a_valid_recipe_loads() -> None:
    recipe = parse_recipe(VALID)
    assert isinstance(recipe, Recipe)
    assert [s.id for s in recipe.steps] == ["open", "press"]
    assert recipe.steps[1].kind == "click"


def test_load_recipe_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "demo.yaml"
    path.write_text(VALID, encoding="utf-8")
    assert load_recipe(path).name == "demo"


def test_yaml_syntax_error_names_file_line_and_column() -> None:
    error = invalid(
        """\
        name: demo
        tabs:
          main: {start: "http://x/"
        steps: []
        """
    )
    assert error.code == "RECIPE_INVALID"
    assert error.context["file"] == "demo.yaml"
    assert error.context["line"] == 4
    assert error.context["column"] == 1
    assert "YAML syntax error" in error.message
    assert str(error).startswith("RECIPE_INVALID: demo.yaml:4:1: ")


def test_bad_indentation_is_a_syntax_error_with_its_line() -> None:
    error = invalid("name: demo\n  tabs: x\n bad: y\n")
    assert error.context["line"] == 2
    assert "column" in error.context


def test_schema_error_has_field_path_and_position() -> None:
    text = VALID.replace("        role: button\n        name: Go\n", "        rol: button\n")
    error = invalid(text)
    assert error.context["path"] == "steps[1].click.target.rol"
    assert (error.context["line"], error.context["column"]) == (13, 9)
    assert "unknown field `rol`" in error.message
    assert "did you mean `role`?" in error.message


def test_model_level_error_points_at_the_object() -> None:
    text = VALID.replace(
        "        role: button\n        name: Go\n", "        css: a\n        text: b\n"
    )
    error = invalid(text)
    assert error.context["path"] == "steps[1].click.target"
    assert (error.context["line"], error.context["column"]) == (12, 7)
    assert "exactly one of role, label" in error.message
    assert "(got text, css)" in error.message


def test_wrong_type_names_the_path() -> None:
    error = invalid(VALID.replace("name: demo", "name: demo\nversion: many"))
    assert error.context["path"] == "version"
    assert error.context["line"] == 2
    assert "integer" in error.message


def test_unknown_field_gets_a_did_you_mean_hint() -> None:
    text = VALID + "    exepct:\n      - url: '**/done'\n"
    error = invalid(text)
    assert error.context["path"] == "steps[1].exepct"
    assert "did you mean `expect`?" in error.message
    assert "Remove or rename" in error.fix


def test_unknown_field_without_a_close_match_has_no_hint() -> None:
    error = invalid(VALID + "zzzzqqq: 1\n")
    assert "unknown field `zzzzqqq`" in error.message
    assert "did you mean" not in error.message


def test_missing_field_is_named() -> None:
    error = invalid("name: demo\ntabs: {main: {start: 'http://x/'}}\n")
    assert error.context["path"] == "steps"
    assert "missing field `steps`" in error.message
    assert error.fix == "Add the missing field."


def test_every_problem_is_named() -> None:
    error = invalid("name: demo\n")
    assert error.message == "tabs: missing field `tabs` (also: 1:1 steps: missing field `steps`)"


def test_a_nested_typo_is_named_and_its_missing_echo_is_not() -> None:
    error = invalid(VALID.replace("      target:\n", "      taget:\n"))
    assert error.message == "steps[1].click.taget: unknown field `taget`; did you mean `target`?"
    assert (error.context["line"], error.context["column"]) == (12, 7)


def test_every_problem_of_a_step_each_with_its_place() -> None:
    text = VALID.replace("name: Go", "name: Go\n      button: 4")
    error = invalid(text.replace("role: button", "role: buton"))
    assert error.message == (
        "steps[1].click.target.role: unknown ARIA role 'buton'; did you mean 'button'? (also: "
        "15:7 steps[1].click.button: Input should be 'left', 'right' or 'middle')"
    )


def test_an_unknown_role_is_refused_with_a_hint() -> None:
    error = invalid(VALID.replace("role: button", "role: buton"))
    assert error.context["path"] == "steps[1].click.target.role"
    assert "unknown ARIA role 'buton'; did you mean 'button'?" in error.message


def test_a_field_of_several_types_is_one_problem() -> None:
    error = invalid(VALID.replace("tabs:", "params: {p: {default: [1]}}\ntabs:"))
    assert error.message == ("params.p.default: expected one of the types: str, int, float, bool")


def test_duplicate_keys_are_refused_with_the_second_position() -> None:
    error = invalid(VALID.replace("name: demo", "name: demo\nname: other"))
    assert "duplicate key 'name'" in error.message
    assert (error.context["line"], error.context["column"]) == (2, 1)


def test_duplicate_keys_deep_in_the_document() -> None:
    error = invalid(VALID.replace("    goto: /\n", "    goto: /\n    goto: /x\n"))
    assert "duplicate key 'goto'" in error.message
    assert error.context["line"] == 9


@pytest.mark.parametrize("text", ["", "# only a comment\n", "- a\n- b\n", "just text\n", "42\n"])
def test_a_document_that_is_not_a_mapping_is_refused(text: str) -> None:
    error = invalid(text)
    assert "must be a mapping" in error.message
    assert (error.context["line"], error.context["column"]) == (1, 1)


def test_several_documents_are_refused() -> None:
    error = invalid(VALID + "---\nname: second\n")
    assert "YAML" in error.message


def test_non_text_keys_are_refused() -> None:
    error = invalid(VALID + '!!int "1": one\n')
    assert "a key must be text" in error.message


def test_a_plain_key_is_its_text() -> None:
    error = invalid(VALID + "1: one\n")
    assert "unknown field `1`" in error.message


@pytest.mark.parametrize("key", ["on", "yes", "no", "true", "off", "null", "~"])
def test_yaml_11_boolean_and_null_words_are_text_as_keys(key: str) -> None:
    error = invalid(VALID + f"{key}: x\n")
    assert f"unknown field `{key}`" in error.message


def test_retry_on_reads_as_a_key() -> None:
    text = VALID.replace(
        "name: demo", "name: demo\nretry: {attempts: 3, max_seconds: 30, on: [navigation]}"
    )
    recipe = parse_recipe(text)
    assert recipe.retry is not None
    assert recipe.retry.on == ["navigation"]


def test_merge_keys_are_refused_with_a_clear_message() -> None:
    error = invalid(VALID + "base: &b {x: 1}\nother:\n  <<: *b\n")
    assert "merge keys (<<) are not supported" in error.message


def test_python_tags_are_not_constructed() -> None:
    error = invalid(VALID.replace("name: demo", "name: !!python/object/apply:os.system [true]"))
    assert error.code == "RECIPE_INVALID"


def test_self_referencing_alias_is_refused() -> None:
    error = invalid(VALID + "loop: &a [*a]\n")
    assert "nests too deeply" in error.message


def test_deeply_nested_flow_collections_are_refused() -> None:
    error = invalid("[" * 500 + "]" * 500)
    assert "nests too deeply" in error.message
    assert error.context["column"] == 66


def test_alias_expansion_is_bounded() -> None:
    # "Billion laughs": nine levels of ten aliases each would build 10**9 nodes.
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{refs}]")
    error = invalid("\n".join(lines) + "\n")
    assert "too large" in error.message


def test_yaml_booleans_are_refused_where_text_is_expected() -> None:
    text = VALID.replace("        role: button\n        name: Go\n", "        label: yes\n")
    error = invalid(text)
    assert error.context["path"] == "steps[1].click.target.label"
    assert "quote it" in error.message


def test_numbers_are_accepted_where_text_is_expected() -> None:
    recipe = parse_recipe(
        VALID.replace("    goto: /\n", "    fill: {target: {label: N}, value: 42}\n")
    )
    assert recipe.steps[0].fill is not None
    assert recipe.steps[0].fill.value == "42"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RecipeInvalid) as caught:
        load_recipe(tmp_path / "nope.yaml")
    assert caught.value.context["file"] == str(tmp_path / "nope.yaml")
    assert "no recipe file" in caught.value.message


def test_a_directory_is_not_a_recipe(tmp_path: Path) -> None:
    with pytest.raises(RecipeInvalid, match="is a directory, not a regular file"):
        load_recipe(tmp_path)


def test_a_fifo_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "recipe.yaml"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer for ever
    with pytest.raises(RecipeInvalid, match="is a FIFO") as caught:
        load_recipe(fifo)
    assert caught.value.context["file"] == str(fifo)


def test_a_device_is_refused_before_it_is_read() -> None:
    with pytest.raises(RecipeInvalid, match="is a character device"):
        load_recipe("/dev/zero")


def test_a_recipe_over_the_size_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(VALID + "#" * MAX_RECIPE_BYTES)
    with pytest.raises(RecipeInvalid, match="larger than 1 MiB"):
        load_recipe(path)


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(VALID.replace("Go", "Gr\xfc\xdfe").encode("latin-1"))
    with pytest.raises(RecipeInvalid) as caught:
        load_recipe(path)
    assert caught.value.context["file"] == str(path)
    assert "UTF-8" in caught.value.fix


def test_control_characters_are_a_yaml_error() -> None:
    error = invalid(VALID + "bad: \x00\n")
    assert "YAML" in error.message


def test_error_source_defaults_to_a_placeholder() -> None:
    with pytest.raises(RecipeInvalid) as caught:
        parse_recipe("[]")
    assert caught.value.context["file"] == "<recipe>"


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        (("steps", 3, "click", "target"), "steps[3].click.target"),
        (("params", "title", "type"), "params.title.type"),
        ((), "(top level)"),
        ((0, "a"), "[0].a"),
    ],
)
def test_format_path(loc: tuple[str | int, ...], expected: str) -> None:
    assert format_path(loc) == expected


@pytest.mark.parametrize(
    "value", ["!!timestamp x", "!!int x", "!!int", "!!bool x", "!!timestamp 2001-13-45", "9" * 5000]
)
def test_values_yaml_cannot_construct_are_yaml_errors(value: str) -> None:
    error = invalid(f"{VALID}extra: {value}\n")
    assert "cannot read" in error.message
    assert (error.context["line"], error.context["column"]) == (15, 8)
