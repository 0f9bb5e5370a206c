"""The template syntax: ``{{ name }}`` substitution, no code, unknown names are errors."""

from __future__ import annotations

import pytest

from northstar.recipe.templates import (
    TemplateError,
    parse_template,
    render,
    render_url,
    template_names,
)


def test_substitutes_names() -> None:
    assert render("Hello {{ who }}!", {"who": "Ada"}) == "Hello Ada!"


def test_substitutes_several_names_and_repeats() -> None:
    text = "{{a}}-{{ b }}-{{a}}"
    assert render(text, {"a": "x", "b": "y"}) == "x-y-x"


@pytest.mark.parametrize("template", ["{{x}}", "{{ x }}", "{{   x\t}}", "{{\nx\n}}"])
def test_whitespace_inside_braces_is_ignored(template: str) -> None:
    assert render(template, {"x": "v"}) == "v"


def test_text_without_braces_is_returned_unchanged() -> None:
    assert render("plain text", {}) == "plain text"


def test_values_are_text_and_booleans_are_lowercase() -> None:
    values = {"n": 3, "f": 1.5, "yes": True, "no": False}
    assert render("{{n}} {{f}} {{yes}} {{no}}", values) == "3 1.5 true false"


def test_an_unset_optional_value_renders_empty() -> None:
    assert render("[{{ maybe }}]", {"maybe": None}) == "[]"


def test_a_substituted_value_is_not_parsed_again() -> None:
    assert render("{{ a }}", {"a": "{{ b }}"}) == "{{ b }}"


def test_unknown_name_is_an_error_naming_it_and_the_known_names() -> None:
    with pytest.raises(TemplateError, match=r"unknown name \{\{ missing \}\}.*known: a, b"):
        render("{{ missing }}", {"a": 1, "b": 2})


def test_unknown_name_is_never_an_empty_string() -> None:
    with pytest.raises(TemplateError):
        render("x{{ nothing }}y", {})


@pytest.mark.parametrize(
    "template",
    [
        "{{ __import__('os') }}",
        "{{ __import__('os').system('true') }}",
        "{{ a.b }}",
        "{{ a|upper }}",
        "{{ a['b'] }}",
        "{{ a + 1 }}",
        "{{ a() }}",
        "{{ 1 }}",
        "{{ }}",
        "{{ a b }}",
        "{{ lambda: 0 }}",
    ],
)
def test_expressions_are_errors_not_code(template: str) -> None:
    with pytest.raises(TemplateError, match="not a plain name"):
        render(template, {"a": "x", "__import__": __import__})


@pytest.mark.parametrize(
    "template", ["{{ a }", "{ a }}", "{{ a", "a }}", "{{", "}}", "x {{ a }} }}", "{{ {{ a }}"]
)
def test_unbalanced_braces_are_errors(template: str) -> None:
    with pytest.raises(TemplateError):
        render(template, {"a": "x"})


def test_single_braces_are_literal_text() -> None:
    assert render("{a} {{ a }} {b}", {"a": "x"}) == "{a} x {b}"


def test_template_names_lists_every_name_once() -> None:
    assert template_names("{{ a }}/{{b}}/{{ a }}") == {"a", "b"}
    assert template_names("no names") == set()


def test_parse_template_splits_literals_and_names() -> None:
    assert parse_template("a{{ x }}b") == ("a", ("x",), "b")


def test_template_error_is_a_value_error() -> None:
    # The compiler converts it; outside the compiler it is a plain ValueError.
    assert issubclass(TemplateError, ValueError)


def test_a_query_value_in_a_url_is_percent_encoded() -> None:
    url = render_url("/posts?q={{ q }}&n={{ n }}#{{ q }}", {"q": "Fish & chips #1", "n": 5})
    assert url == "/posts?q=Fish%20%26%20chips%20%231&n=5#Fish%20%26%20chips%20%231"


def test_a_value_before_the_query_goes_in_as_written() -> None:
    values = {"base_url": "http://127.0.0.1:8000/app", "page": "/items?page=2", "id": "7"}
    assert render_url("{{ base_url }}{{ page }}", values) == (
        "http://127.0.0.1:8000/app/items?page=2"
    )
    assert render_url("{{ base_url }}/posts/{{ id }}/edit", values) == (
        "http://127.0.0.1:8000/app/posts/7/edit"
    )


def test_plain_render_does_not_encode() -> None:
    assert render("/s?q={{ q }}", {"q": "a & b"}) == "/s?q=a & b"
