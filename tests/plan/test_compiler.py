"""The compiler: static checks in ``prepare``, one iteration's immutable plan in ``bind``."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

import pytest

from northstar.errors import NorthstarError, ParamInvalid, ParamMissing, RecipeInvalid
from northstar.plan.compiler import bind, compile_recipe, prepare
from northstar.plan.model import Plan
from northstar.recipe.loader import load_recipe, parse_recipe
from northstar.recipe.params import coerce_params
from tests.conftest import RECIPES, make_plan

BASE = "http://127.0.0.1:8000"

SIMPLE = """\
name: simple
params:
  title: {type: string, required: true}
tabs:
  admin:
    start: "{{ base_url }}/admin/"
steps:
  - id: open
    tab: admin
    goto: posts/new
  - id: title
    tab: admin
    fill: {target: {label: Title}, value: "{{ title }}"}
  - id: save
    tab: admin
    click: {target: {role: button, name: Save}}
    effect: submit
    expect:
      - visible: {text: "Saved {{ title }}"}
"""


def recipe_text(body: str) -> str:
    return textwrap.dedent(body)


def rejected(text: str) -> RecipeInvalid:
    with pytest.raises(RecipeInvalid) as caught:
        prepare(parse_recipe(recipe_text(text), source="t.yaml"), source="t.yaml")
    error = caught.value
    assert error.code == "RECIPE_INVALID"
    assert error.context["file"] == "t.yaml"
    assert error.fix
    return error


def plan_for(text: str, params: dict[str, Any] | None = None, **kwargs: Any) -> Plan:
    return make_plan(recipe_text(text), params or {}, **kwargs)


# --- static checks (prepare) -------------------------------------------------------------


def test_a_valid_recipe_prepares() -> None:
    compiled = prepare(parse_recipe(SIMPLE))
    assert compiled.uses_base_url
    assert len(compiled.recipe_hash) == 64


def test_unknown_tab_role() -> None:
    error = rejected(
        SIMPLE.replace("  - id: title\n    tab: admin", "  - id: title\n    tab: nope")
    )
    assert error.context["path"] == "steps[1].tab"
    assert "unknown tab role 'nope'" in error.message
    assert "Declare the role" in error.fix


def test_unknown_tab_in_an_expectation() -> None:
    error = rejected(SIMPLE.replace("      - visible:", "      - tab: nope\n        visible:"))
    assert error.context["path"] == "steps[2].expect[0].tab"


def test_unknown_tab_in_an_output() -> None:
    error = rejected(SIMPLE + "outputs:\n  u: {tab: nope, from: url}\n")
    assert error.context["path"] == "outputs.u.tab"


def test_done_when_must_name_its_tab() -> None:
    error = rejected(SIMPLE + "done_when:\n  - url: '**/x'\n")
    assert error.context["path"] == "done_when[0].tab"


def test_reconcile_probe_with_unknown_tab() -> None:
    text = SIMPLE + "    reconcile:\n      - check: {tab: nope, url: '**/x'}\n"
    error = rejected(text)
    assert error.context["path"] == "steps[2].reconcile[0].check.tab"


POPUP = """\
name: popup
tabs:
  main: {start: "http://127.0.0.1/"}
  preview: {opened_by: OPENER}
steps:
  - id: open-preview
    tab: main
    click: {target: {role: link, name: Preview}}
  - id: look
    tab: preview
    verify_outcome: {visible: {role: heading, name: Preview}}
"""


def test_opened_by_names_a_missing_step() -> None:
    error = rejected(POPUP.replace("OPENER", "no-such-step"))
    assert error.context["path"] == "tabs.preview.opened_by"
    assert "no step 'no-such-step'" in error.message
    assert "existing step" in error.fix


def test_opened_by_names_a_later_step() -> None:
    error = rejected(POPUP.replace("OPENER", "look"))
    assert error.context["path"] == "tabs.preview.opened_by"


def test_opened_by_a_step_after_the_first_use() -> None:
    text = POPUP.replace("OPENER", "late") + (
        "  - id: late\n    tab: main\n    click: {target: {role: link, name: Again}}\n"
    )
    error = rejected(text)
    assert "comes after the first step on tab 'preview'" in error.message


def test_opened_by_a_step_that_cannot_open_a_popup() -> None:
    text = POPUP.replace("OPENER", "go").replace(
        "steps:\n", "steps:\n  - id: go\n    tab: main\n    goto: /x\n"
    )
    error = rejected(text)
    assert "cannot open a popup" in error.message


def test_one_step_cannot_open_two_tabs() -> None:
    text = POPUP.replace("OPENER", "open-preview").replace(
        "  preview:", "  other: {opened_by: open-preview}\n  preview:"
    )
    error = rejected(text)
    assert error.context["path"] == "tabs.preview.opened_by"
    assert "already opens tab 'other'" in error.message


def test_an_output_name_is_produced_once() -> None:
    extract = "  - {id: ex, tab: admin, extract: {as: n, from: url}}\n"
    error = rejected(SIMPLE + extract + "outputs:\n  n: {tab: admin, from: url}\n")
    assert error.context["path"] == "outputs.n"
    twice = SIMPLE + extract + extract.replace("id: ex", "id: ex2")
    assert rejected(twice).context["path"] == "steps[4].extract.as"


def test_duplicate_step_ids() -> None:
    error = rejected(SIMPLE.replace("- id: title", "- id: open"))
    assert error.context["path"] == "steps[1].id"
    assert "duplicate step id 'open'" in error.message


def test_submit_step_needs_an_expectation() -> None:
    text = SIMPLE.replace('    expect:\n      - visible: {text: "Saved {{ title }}"}\n', "")
    error = rejected(text)
    assert error.context["path"] == "steps[2].expect"
    assert "expect" in error.fix


def test_passive_step_cannot_submit() -> None:
    text = SIMPLE + (
        "  - id: v\n    tab: admin\n    verify_outcome: {url: '**/x'}\n"
        "    effect: submit\n    expect: [{url: '**/x'}]\n"
    )
    error = rejected(text)
    assert error.context["path"] == "steps[3].effect"


def test_unknown_template_name() -> None:
    error = rejected(SIMPLE.replace('{{ title }}"}\n  - id: save', '{{ titel }}"}\n  - id: save'))
    assert error.context["path"] == "steps[1].fill.value"
    assert "unknown name {{ titel }}" in error.message
    assert "title" in error.fix


# A name the author chose is checked like any other, even when it is one of the format's
# field names that are never templated.
NAMING_KEYWORDS = ["id", "tab", "description", "effect", "opened_by", "regex", "url", "goto"]


@pytest.mark.parametrize("name", NAMING_KEYWORDS)
def test_an_output_named_like_a_field_has_its_regex_checked(name: str) -> None:
    error = rejected(SIMPLE + f"outputs:\n  {name}: {{tab: admin, from: url, regex: '('}}\n")
    assert error.context["path"] == f"outputs.{name}.regex"
    assert "invalid regular expression" in error.message


@pytest.mark.parametrize("name", NAMING_KEYWORDS)
def test_an_output_named_like_a_field_has_its_templates_checked(name: str) -> None:
    output = f"  {name}: {{tab: admin, from: text, target: {{text: '{{{{ nope }}}}'}}}}\n"
    error = rejected(SIMPLE + "outputs:\n" + output)
    assert error.context["path"] == f"outputs.{name}.target.text"
    assert "unknown name {{ nope }}" in error.message


@pytest.mark.parametrize("name", ["id", "description", "tab"])
def test_a_tab_role_named_like_a_field_has_its_templates_checked(name: str) -> None:
    text = SIMPLE.replace("  admin:\n", f"  {name}:\n").replace("tab: admin", f"tab: {name}")
    error = rejected(text.replace("/admin/", "/{{ nope }}/"))
    assert error.context["path"] == f"tabs.{name}.start"


@pytest.mark.parametrize("name", ["a/b", "../x", "post-url", "1st", "", "a b"])
def test_an_output_name_must_be_plain(name: str) -> None:
    error = rejected(SIMPLE + f"outputs:\n  '{name}': {{tab: admin, from: url}}\n")
    assert error.context["path"] == f"outputs.{name}"
    assert "plain name" in error.message


@pytest.mark.parametrize("role", ["../x", "a/b", "", "a b"])
def test_a_tab_role_name_must_be_plain(role: str) -> None:
    text = SIMPLE.replace("  admin:\n", f"  '{role}':\n").replace("tab: admin", f"tab: '{role}'")
    error = rejected(text)
    assert error.context["path"] == f"tabs.{role}"
    assert "plain name" in error.message


def test_template_that_is_not_a_name() -> None:
    error = rejected(SIMPLE.replace('"{{ title }}"}', '"{{ title|upper }}"}'))
    assert error.context["path"] == "steps[1].fill.value"
    assert "not a plain name" in error.message


def test_invalid_regex() -> None:
    error = rejected(SIMPLE + "outputs:\n  n: {tab: admin, from: url, regex: 'id=(\\d+'}\n")
    assert error.context["path"] == "outputs.n.regex"
    assert "invalid regular expression" in error.message


def test_invalid_url_regex_in_expect() -> None:
    error = rejected(SIMPLE.replace('- visible: {text: "Saved {{ title }}"}', "- url_regex: '['"))
    assert error.context["path"] == "steps[2].expect[0].url_regex"


@pytest.mark.parametrize("name", ["base_url", "iteration", "bad-name"])
def test_param_names_must_be_plain_and_not_builtin(name: str) -> None:
    error = rejected(
        SIMPLE.replace(
            "  title: {type: string", f"  {name}: {{type: string}}\n  title: {{type: string"
        )
    )
    assert error.context["path"] == f"params.{name}"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("{type: integer, default: abc}", "must be integer"),
        ("{type: boolean, default: maybe}", "must be boolean"),
        ("{type: enum, choices: [a, b], default: c}", "choose one of a, b"),
    ],
)
def test_a_default_of_the_wrong_type_is_a_recipe_error(spec: str, message: str) -> None:
    error = rejected(
        SIMPLE.replace("  title: {type: string", f"  x: {spec}\n  title: {{type: string")
    )
    assert error.context["path"] == "params.x.default"
    assert message in error.message


# --- parameters and binding ---------------------------------------------------------------


def test_missing_required_param() -> None:
    with pytest.raises(ParamMissing) as caught:
        plan_for(SIMPLE, {}, base_url=BASE)
    assert caught.value.code == "PARAM_MISSING"
    assert "'title'" in caught.value.message


def test_missing_base_url() -> None:
    with pytest.raises(ParamMissing, match="base_url") as caught:
        plan_for(SIMPLE, {"title": "x"})
    assert "--base-url" in caught.value.fix


def test_relative_start_without_base_url() -> None:
    text = SIMPLE.replace('"{{ base_url }}/admin/"', "/admin/")
    with pytest.raises(ParamMissing, match="relative"):
        plan_for(text, {"title": "x"})


@pytest.mark.parametrize(
    "base_url",
    ["127.0.0.1:8000", "http://[::1", "not a url", "/relative", "htp://host", "ftp://host/"],
)
def test_a_base_url_that_is_not_absolute_is_invalid(base_url: str) -> None:
    with pytest.raises(ParamInvalid, match="base URL"):
        plan_for(SIMPLE, {"title": "x"}, base_url=base_url)


def test_a_start_url_that_cannot_be_parsed_is_a_recipe_error() -> None:
    text = SIMPLE.replace('"{{ base_url }}/admin/"', '"http://[::1/admin/"')
    with pytest.raises(RecipeInvalid) as caught:
        plan_for(text, {"title": "x"}, source="t.yaml")
    assert caught.value.context["path"] == "tabs.admin.start"
    assert caught.value.context["file"] == "t.yaml"
    assert "not a valid URL" in caught.value.message


def test_a_goto_that_cannot_be_parsed_is_a_recipe_error_without_the_url() -> None:
    text = SIMPLE.replace("goto: posts/new", 'goto: "http://[{{ title }}"')
    with pytest.raises(RecipeInvalid) as caught:
        plan_for(text, {"title": "hunter2"}, base_url=BASE)
    assert caught.value.context["path"] == "steps[0].goto"
    assert "hunter2" not in str(caught.value)


TYPED = """\
name: typed
params:
  n: {type: integer}
  ok: {type: boolean}
  colour: {type: enum, choices: [red, green]}
  doc: {type: file}
  ratio: {type: number}
tabs:
  t: {start: "http://127.0.0.1/"}
steps:
  - id: a
    tab: t
    fill: {target: {label: X}, value: "{{ n }}/{{ ok }}/{{ colour }}/{{ ratio }}"}
"""


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"n": "1.5"}, "'n' must be integer"),
        ({"n": 1.5}, "'n' must be integer"),
        ({"n": True}, "'n' must be integer"),
        ({"ok": "maybe"}, "'ok' must be boolean"),
        ({"colour": "blue"}, "choose one of red, green"),
        ({"doc": "/no/such/file.txt"}, "no such file"),
        ({"ratio": "x"}, "'ratio' must be number"),
        ({"ratio": 10**400}, "'ratio' must be number"),
        ({"doc": "~no_such_user_northstar/x"}, "no such file"),
        ({"doc": "a" * 5000}, "no such file"),
        ({"doc": "a\0b"}, "NUL byte"),
        ({"nope": "1"}, "unknown parameter 'nope'"),
    ],
)
def test_wrong_types_are_param_invalid(raw: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ParamInvalid) as caught:
        plan_for(TYPED, raw)
    assert caught.value.code == "PARAM_INVALID"
    assert fragment in caught.value.message


def test_param_errors_name_the_row() -> None:
    compiled = prepare(parse_recipe(TYPED))
    with pytest.raises(ParamInvalid) as invalid:
        coerce_params(compiled.recipe.params, {"n": "x"}, row=7)
    assert invalid.value.message.startswith("row 7: parameter 'n'")
    with pytest.raises(ParamMissing) as missing:
        coerce_params(prepare(parse_recipe(SIMPLE)).recipe.params, {}, row=3)
    assert missing.value.message.startswith("row 3: parameter 'title'")


def test_typed_values_are_coerced(tmp_path: Path) -> None:
    doc = tmp_path / "d.txt"
    doc.write_text("x")
    raw = {"n": " 7 ", "ok": "yes", "colour": "red", "doc": str(doc), "ratio": "0.5"}
    plan = plan_for(TYPED, raw, source=str(tmp_path / "typed.yaml"))  # the file is beside it
    assert plan.steps[0].step.fill is not None
    assert plan.steps[0].step.fill.value == "7/true/red/0.5"
    assert plan.param_values["doc"] == str(doc.resolve())


def test_unset_optional_params_render_empty() -> None:
    plan = plan_for(TYPED, {})
    assert plan.steps[0].step.fill is not None
    assert plan.steps[0].step.fill.value == "///"


def test_bind_without_a_declared_value_is_param_missing() -> None:
    compiled = prepare(parse_recipe(SIMPLE))
    with pytest.raises(ParamMissing, match="'title'"):
        bind(compiled, {}, base_url=BASE)


def test_secret_int_value_is_not_in_the_error() -> None:
    text = TYPED.replace("n: {type: integer}", "n: {type: integer, secret: true}")
    with pytest.raises(ParamInvalid) as caught:
        plan_for(text, {"n": "hunter2"})
    assert "hunter2" not in str(caught.value)


# --- the plan -----------------------------------------------------------------------------


def test_plan_is_immutable() -> None:
    plan = plan_for(SIMPLE, {"title": "x"}, base_url=BASE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.iteration = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.steps[0].timeout_ms = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.tabs["admin"].start = "http://evil/"  # type: ignore[misc]
    with pytest.raises(TypeError):
        plan.tabs["other"] = plan.tabs["admin"]  # type: ignore[index]
    with pytest.raises(TypeError):
        plan.param_values["title"] = "y"  # type: ignore[index]
    with pytest.raises(Exception, match="frozen"):
        plan.steps[0].step.id = "other"  # type: ignore[misc]
    assert isinstance(plan.steps, tuple)
    assert isinstance(plan.done_when, tuple)


def test_steps_are_rendered_with_their_settings() -> None:
    plan = plan_for(SIMPLE, {"title": "Hello"}, base_url=BASE)
    save = plan.step("save")
    assert save.is_submit
    assert save.timeout_ms == 10_000
    assert save.index == 2
    assert save.step.expect[0].visible is not None
    assert save.step.expect[0].visible.text == "Saved Hello"
    assert len(save.input_fingerprint) == 64
    assert plan.step("title").input_fingerprint == ""


def test_relative_goto_resolves_against_the_role_start() -> None:
    plan = plan_for(SIMPLE, {"title": "x"}, base_url=BASE + "/")
    assert plan.tabs["admin"].start == BASE + "/admin/"
    assert plan.step("open").step.goto == BASE + "/admin/posts/new"


def test_values_in_a_goto_and_a_start_are_percent_encoded() -> None:
    text = SIMPLE.replace("goto: posts/new", 'goto: "posts?q={{ title }}"').replace(
        'start: "{{ base_url }}/admin/"', 'start: "{{ base_url }}/admin/?from={{ title }}"'
    )
    plan = plan_for(text, {"title": "Q&A #2"}, base_url=BASE)
    assert plan.tabs["admin"].start == BASE + "/admin/?from=Q%26A%20%232"
    assert plan.step("open").step.goto == BASE + "/admin/posts?q=Q%26A%20%232"
    # Elsewhere a value is text, as typed.
    assert plan.step("title").step.fill is not None
    assert plan.step("title").step.fill.value == "Q&A #2"


def test_absolute_path_goto_resolves_against_the_start_origin() -> None:
    text = SIMPLE.replace("goto: posts/new", "goto: /elsewhere")
    plan = plan_for(text, {"title": "x"}, base_url=BASE)
    assert plan.step("open").step.goto == BASE + "/elsewhere"


def test_reconcile_gotos_resolve_against_the_role_start() -> None:
    text = SIMPLE + "    reconcile:\n      - goto: '/search?q={{ title }}'\n"
    plan = plan_for(text, {"title": "x"}, base_url=BASE)
    assert plan.step("save").step.reconcile[0].goto == BASE + "/search?q=x"


def test_default_origins_are_the_start_origin() -> None:
    plan = plan_for(SIMPLE, {"title": "x"}, base_url="HTTP://LOCALHOST:9/app")
    assert plan.tabs["admin"].origins == ("http://localhost:9",)


def test_declared_origins_are_normalized() -> None:
    text = SIMPLE.replace(
        '    start: "{{ base_url }}/admin/"',
        '    start: "{{ base_url }}/admin/"\n    origins: ["{{ base_url }}", "https://CDN.example/x"]',
    )
    plan = plan_for(text, {"title": "x"}, base_url=BASE)
    assert plan.tabs["admin"].origins == (BASE, "https://cdn.example")


def test_popup_role_inherits_the_opener_origins() -> None:
    plan = plan_for(POPUP.replace("OPENER", "open-preview"))
    preview = plan.tabs["preview"]
    assert preview.start is None
    assert preview.opened_by == "open-preview"
    assert preview.origins == ("http://127.0.0.1",)
    assert plan.step("open-preview").opens_tab == "preview"


def test_popup_of_a_popup_inherits_through_the_chain() -> None:
    text = textwrap.dedent(
        """\
        name: chain
        tabs:
          second: {opened_by: open-second}
          first: {opened_by: open-first}
          main: {start: "http://127.0.0.1/", origins: ["http://127.0.0.1", "http://other"]}
        steps:
          - {id: open-first, tab: main, click: {target: {text: a}}}
          - {id: open-second, tab: first, click: {target: {text: b}}}
          - {id: look, tab: second, verify_outcome: {url: "**"}}
        """
    )
    plan = make_plan(text)
    assert plan.tabs["second"].origins == ("http://127.0.0.1", "http://other")


def test_iteration_renders() -> None:
    text = SIMPLE.replace('value: "{{ title }}"', 'value: "{{ title }} #{{ iteration }}"')
    plan = plan_for(text, {"title": "x"}, base_url=BASE, iteration=4)
    assert plan.iteration == 4
    fill = plan.step("title").step.fill
    assert fill is not None
    assert fill.value == "x #4"


def test_base_url_renders_without_a_trailing_slash() -> None:
    plan = plan_for(SIMPLE, {"title": "x"}, base_url=BASE + "/")
    assert plan.tabs["admin"].start == BASE + "/admin/"


def test_regexes_are_not_rendered() -> None:
    text = SIMPLE + "outputs:\n  n: {tab: admin, from: url, regex: 'id=(\\d{2})'}\n"
    plan = plan_for(text, {"title": "x"}, base_url=BASE)
    assert dict(plan.outputs)["n"].regex == "id=(\\d{2})"


def test_extract_needs_a_target_for_text() -> None:
    text = SIMPLE + "  - id: ex\n    tab: admin\n    extract: {as: v, from: text}\n"
    with pytest.raises(RecipeInvalid, match="needs a `target`"):
        parse_recipe(text)


# --- hashes and secrets --------------------------------------------------------------------


def test_definition_hash_is_stable_across_loads() -> None:
    path = RECIPES / "contact-form.yaml"
    first = compile_recipe(load_recipe(path), {"name": "a"}, base_url=BASE, source=str(path))
    second = compile_recipe(load_recipe(path), {"name": "a"}, base_url=BASE, source=str(path))
    assert first.definition_hash == second.definition_hash
    assert len(first.definition_hash) == 64


def test_definition_hash_does_not_depend_on_parameter_values() -> None:
    one = plan_for(SIMPLE, {"title": "a"}, base_url=BASE)
    two = plan_for(SIMPLE, {"title": "b"}, base_url=BASE)
    assert one.definition_hash == two.definition_hash
    assert one.params_fingerprint != two.params_fingerprint


def test_definition_hash_changes_with_the_recipe() -> None:
    one = plan_for(SIMPLE, {"title": "a"}, base_url=BASE)
    changed = SIMPLE.replace("name: Save", "name: Save now")
    assert plan_for(changed, {"title": "a"}, base_url=BASE).definition_hash != one.definition_hash


def test_definition_hash_ignores_yaml_formatting() -> None:
    reformatted = SIMPLE.replace(
        "{type: string, required: true}", "\n    type: string\n    required: true"
    )
    one = plan_for(SIMPLE, {"title": "a"}, base_url=BASE)
    assert (
        plan_for(reformatted, {"title": "a"}, base_url=BASE).definition_hash == one.definition_hash
    )


UPLOAD = """\
name: upload
params:
  doc: {type: file, required: true}
tabs:
  t: {start: "http://127.0.0.1/"}
steps:
  - {id: up, tab: t, upload: {target: {label: File}, files: ["{{ doc }}", "fixed.txt"]}}
"""


def test_definition_hash_changes_with_selected_file_bytes(tmp_path: Path) -> None:
    recipe_file = tmp_path / "upload.yaml"
    recipe_file.write_text(UPLOAD)
    doc = tmp_path / "doc.txt"
    fixed = tmp_path / "fixed.txt"
    doc.write_text("one")
    fixed.write_text("fixed")

    def plan() -> Plan:
        compiled = prepare(load_recipe(recipe_file), source=str(recipe_file))
        values = coerce_params(compiled.recipe.params, {"doc": str(doc)})
        return bind(compiled, values)

    first = plan()
    assert dict(first.files).keys() == {str(doc.resolve()), str(fixed.resolve())}
    assert plan().definition_hash == first.definition_hash
    doc.write_text("two")
    second = plan()
    assert second.definition_hash != first.definition_hash
    fixed.write_text("changed")
    assert plan().definition_hash != second.definition_hash


def test_upload_of_a_missing_file_is_param_invalid(tmp_path: Path) -> None:
    recipe_file = tmp_path / "upload.yaml"
    recipe_file.write_text(UPLOAD)
    doc = tmp_path / "doc.txt"
    doc.write_text("one")
    compiled = prepare(load_recipe(recipe_file), source=str(recipe_file))
    with pytest.raises(ParamInvalid, match=r"fixed\.txt"):
        bind(compiled, coerce_params(compiled.recipe.params, {"doc": str(doc)}))


def test_file_param_default_is_read_from_the_recipe_folder() -> None:
    path = RECIPES / "contact-form.yaml"
    plan = compile_recipe(load_recipe(path), {"name": "a"}, base_url=BASE, source=str(path))
    attachment = str((RECIPES / "files" / "notes.txt").resolve())
    assert plan.param_values["attachment"] == attachment
    assert attachment in dict(plan.files)


SECRET = """\
name: secret
params:
  user: {type: string, default: ada}
  password: {type: string, secret: true, required: true}
tabs:
  t: {start: "http://127.0.0.1/login"}
steps:
  - {id: p, tab: t, fill: {target: {label: Password}, value: "{{ password }}"}}
  - id: go
    tab: t
    click: {target: {role: button, name: "Sign in as {{ user }}"}}
    effect: submit
    expect: [{visible: {text: "Welcome {{ password }}"}}]
"""


@pytest.mark.parametrize("secret", ["s3cr3t-Value", 'quo"te\\back', "pässwörd ✓"])
def test_secrets_are_in_plan_secrets_and_not_in_fingerprints(secret: str) -> None:
    plan = plan_for(SECRET, {"password": secret})
    assert plan.secrets == frozenset({secret})
    assert secret not in plan.params_fingerprint
    assert secret not in plan.step("go").input_fingerprint
    other = plan_for(SECRET, {"password": secret + "x"})
    assert other.params_fingerprint != plan.params_fingerprint


def test_input_fingerprint_hashes_secret_values_before_digesting() -> None:
    # The fingerprint of the step with the secret must equal the one computed with the
    # secret already replaced by its digest: the raw secret never enters the digest input.
    import hashlib

    secret = "pässwörd ✓"
    digest = "sha256:" + hashlib.sha256(secret.encode()).hexdigest()
    plan = plan_for(SECRET, {"password": secret})
    text = SECRET.replace("{{ password }}", digest).replace(
        "password: {type: string, secret: true, required: true}", "password: {type: string}"
    )
    masked = plan_for(text, {"password": "unused"})
    assert plan.step("go").input_fingerprint == masked.step("go").input_fingerprint


def test_compile_recipe_is_prepare_and_bind() -> None:
    recipe = parse_recipe(SIMPLE)
    plan = compile_recipe(recipe, {"title": "x"}, base_url=BASE, iteration=2)
    assert plan.iteration == 2
    assert plan.recipe_name == "simple"
    assert plan.definition_hash == plan_for(SIMPLE, {"title": "x"}, base_url=BASE).definition_hash


def test_every_stored_recipe_prepares() -> None:
    for path in sorted(RECIPES.glob("*.yaml")):
        compiled = prepare(load_recipe(path), source=str(path))
        assert compiled.recipe.steps


def test_all_compile_errors_are_northstar_errors() -> None:
    assert issubclass(RecipeInvalid, NorthstarError)
    assert issubclass(ParamInvalid, NorthstarError)
