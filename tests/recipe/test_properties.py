"""Property tests: whatever a recipe file or a parameter holds, only NorthstarErrors come out.

The loader, the compiler and parameter coercion face text written by people and models.
Thousands of random texts, random YAML structures and mutations of the stored recipes go
through the whole static path (parse, prepare, coerce, bind); each must end in a plan or
in a ``NorthstarError`` with a code, never in a traceback of another kind.
"""

from __future__ import annotations

import asyncio
import copy
import math
from collections.abc import Callable
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from northstar.errors import NorthstarError
from northstar.plan.compiler import bind, prepare
from northstar.plan.model import Plan
from northstar.recipe.loader import load_recipe, parse_recipe
from northstar.recipe.model import Param
from northstar.recipe.params import coerce_params
from northstar.results import IterationResult, IterationState
from northstar.run.runner import ProgramRunner
from tests.conftest import RECIPES
from tests.run.test_runner_decisions import FakeHost, Recorder, Script, no_sleep

BASE_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def examples(count: int) -> settings:
    return settings(BASE_SETTINGS, max_examples=count)


SOURCE = str(RECIPES / "fuzzed.yaml")  # relative upload paths resolve in recipes/
STORED = {path.name: yaml.safe_load(path.read_text()) for path in sorted(RECIPES.glob("*.yaml"))}
Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

FIELD_NAMES = sorted(
    {
        "name", "version", "description", "timeout", "retry", "params", "tabs", "steps",
        "outputs", "done_when", "id", "tab", "goto", "click", "fill", "select", "check",
        "uncheck", "press", "upload", "hover", "wait_for", "verify_outcome", "verify_field",
        "extract", "effect", "expect", "reconcile", "target", "role", "label", "text", "css",
        "placeholder", "test_id", "within", "frame", "exact", "value", "values", "files",
        "key", "url", "url_regex", "visible", "hidden", "title", "checked", "count",
        "equals", "contains", "as", "from", "attribute", "regex", "start", "opened_by",
        "origins", "type", "required", "default", "choices", "secret", "attempts",
        "max_seconds", "on", "submit", "button",
    }
)  # fmt: skip

TEMPLATE_TEXT = st.sampled_from(
    [
        "{{",
        "}}",
        "{{ }}",
        "{{ base_url }}",
        "{{ base_url }}/x",
        "{{ iteration }}",
        "{{ title }}",
        "{{ nope }}",
        "{{ a.b }}",
        "{{ a|upper }}",
        "{{ __import__('os') }}",
        "{{{{ x }}}}",
        "http://[::1",
        "http://127.0.0.1:8000/",
        "/relative/path",
        "**/done",
        "(unclosed",
        "a{1000000000000}",
        "files/notes.txt",
        "submit",
        "text",
        "url",
        "",
    ]
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**18, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    TEMPLATE_TEXT,
    st.sampled_from(FIELD_NAMES),
)
KEYS = st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=12))

YAMLISH = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(KEYS, children, max_size=5),
    ),
    max_leaves=12,
)

PARAM_VALUES = st.one_of(
    SCALARS,
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.just(str(RECIPES / "files" / "notes.txt")),
    st.sampled_from(["1.5", "maybe", "yes", "0", "1e400", " 7 ", "~nobody/x", "a" * 5000]),
)
BASE_URLS = st.one_of(
    st.none(),
    st.just("http://127.0.0.1:8000"),
    st.just("https://example.test/app/"),
    st.text(max_size=20),
    TEMPLATE_TEXT,
)


def params_for(recipe_params: Any) -> st.SearchStrategy[dict[Any, Any]]:
    names = list(recipe_params) if isinstance(recipe_params, dict) else []
    keys = st.one_of(st.sampled_from([*names, "base_url", "iteration"]), st.text(max_size=8))
    return st.dictionaries(keys, PARAM_VALUES, max_size=6)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=Dumper, allow_unicode=True, sort_keys=False)


def assert_northstar_error(error: NorthstarError) -> None:
    assert isinstance(error.code, str)
    assert error.code
    assert error.code == type(error).code
    assert error.fix
    assert str(error).startswith(error.code)
    assert error.to_dict()["code"] == error.code


def check_plan(plan: Plan, params: dict[Any, Any]) -> None:
    assert len(plan.definition_hash) == 64
    assert len(plan.params_fingerprint) == 64
    assert all(step.step.id for step in plan.steps)
    fingerprints = [plan.params_fingerprint] + [s.input_fingerprint for s in plan.steps]
    for secret in plan.secrets:
        # A short hex secret may appear in a hex digest by chance; anything else may not.
        if len(secret) >= 8 or set(secret) - set("0123456789abcdef"):
            assert not any(secret in fingerprint for fingerprint in fingerprints)


def exercise(text: str, params: dict[Any, Any], base_url: str | None, iteration: int = 1) -> None:
    """The whole static path; only a plan or a NorthstarError may come out."""
    try:
        recipe = parse_recipe(text, source=SOURCE)
        compiled = prepare(recipe, source=SOURCE)
        values = coerce_params(recipe.params, params, recipe_dir=RECIPES)
        plan = bind(compiled, values, base_url=base_url, iteration=iteration)
    except NorthstarError as error:
        assert_northstar_error(error)
        return
    check_plan(plan, params)


# --- random text ----------------------------------------------------------------------------

YAML_TOKENS = st.sampled_from(
    [
        "name: x\n", "tabs:\n", "steps:\n", "  - ", "id: a\n", "tab: t\n", "  t: ",
        "{start: 'http://h/'}\n", "goto: /\n", ": ", "- ", "[", "]", "{", "}", ",", "&a ",
        "*a ", "!!python/object ", "!!binary ", "<<: ", "? ", "|\n", ">\n", "'", '"', "#",
        "\t", "\n", "  ", "---\n", "...\n", "%YAML 1.1\n", "{{ x }}", "\x00", "\ufeff",
        "!!set ", "!!omap ", "!!timestamp 2001-12-14 ", "!!timestamp ", "!!int ", "!!bool ",
        "1e400", ".nan", "~",
    ]
)  # fmt: skip


@examples(1000)
@given(st.text(max_size=200))
def test_random_text(text: str) -> None:
    exercise(text, {}, "http://127.0.0.1:8000")


@examples(800)
@given(st.lists(YAML_TOKENS | st.text(max_size=5), max_size=40).map("".join))
def test_random_yaml_tokens(text: str) -> None:
    exercise(text, {}, "http://127.0.0.1:8000")


# --- random structures ----------------------------------------------------------------------


@examples(300)
@given(st.dictionaries(KEYS, YAMLISH, max_size=8))
def test_random_mappings(data: dict[str, Any]) -> None:
    exercise(dump(data), {}, "http://127.0.0.1:8000")


RECIPE_SHAPED = st.fixed_dictionaries(
    {
        "name": st.one_of(st.just("fuzz"), SCALARS),
        "tabs": st.one_of(
            st.just({"t": {"start": "http://127.0.0.1/"}}),
            st.dictionaries(KEYS, YAMLISH, max_size=3),
        ),
        "steps": st.lists(
            st.one_of(
                st.just({"id": "a", "tab": "t", "goto": "/"}),
                st.dictionaries(KEYS, YAMLISH, max_size=6),
                st.fixed_dictionaries(
                    {"id": st.text(max_size=5), "tab": st.just("t")},
                    optional={k: YAMLISH for k in ("click", "fill", "expect", "effect")},
                ),
            ),
            max_size=4,
        ),
    },
    optional={
        "params": st.dictionaries(st.text(max_size=6), YAMLISH, max_size=3),
        "outputs": YAMLISH,
        "done_when": YAMLISH,
    },
)


@examples(300)
@given(RECIPE_SHAPED, BASE_URLS)
def test_random_recipe_shaped_documents(data: dict[str, Any], base_url: str | None) -> None:
    exercise(dump(data), {}, base_url)


# --- mutations of the stored recipes --------------------------------------------------------

Path_ = tuple[str | int, ...]


def paths(data: Any, here: Path_ = ()) -> list[Path_]:
    """Every place in nested data (the root included)."""
    found = [here]
    if isinstance(data, dict):
        for key, value in data.items():
            found += paths(value, (*here, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += paths(value, (*here, i))
    return found


def get(data: Any, path: Path_) -> Any:
    for part in path:
        data = data[part]
    return data


def put(data: Any, path: Path_, value: Any) -> Any:
    if not path:
        return value
    get(data, path[:-1])[path[-1]] = value
    return data


def drop(data: Any, path: Path_, draw: Callable[..., Any]) -> Any:
    if path:
        del get(data, path[:-1])[path[-1]]
    return data


def swap_type(data: Any, path: Path_, draw: Callable[..., Any]) -> Any:
    return put(data, path, draw(YAMLISH))


def insert_unknown_key(data: Any, path: Path_, draw: Callable[..., Any]) -> Any:
    target = get(data, path)
    if isinstance(target, dict):
        target[draw(KEYS)] = draw(YAMLISH)
    return data


def template_strings(data: Any, path: Path_, draw: Callable[..., Any]) -> Any:
    text = draw(st.lists(TEMPLATE_TEXT | st.text(max_size=4), min_size=1, max_size=4))
    return put(data, path, "".join(text))


def deep_nesting(data: Any, path: Path_, draw: Callable[..., Any]) -> Any:
    value = get(data, path)
    for i in range(draw(st.integers(min_value=10, max_value=120))):
        value = [value] if i % 2 else {"target": value}
    return put(data, path, value)


def huge_number(data: Any, path: Path_, draw: Callable[..., Any]) -> Any:
    number = draw(
        st.sampled_from([10**30, -(10**30), 10**400, 1e308, -1e308, math.inf, -math.inf, 0, -1])
    )
    return put(data, path, number)


def none_value(data: Any, path: Path_, draw: Callable[..., Any]) -> Any:
    return put(data, path, None)


def list_where_dict(data: Any, path: Path_, draw: Callable[..., Any]) -> Any:
    value = get(data, path)
    if isinstance(value, dict):
        return put(data, path, [value] if draw(st.booleans()) else list(value.items()))
    if isinstance(value, list):
        return put(data, path, {str(i): item for i, item in enumerate(value)})
    return data


def duplicate(data: Any, path: Path_, draw: Callable[..., Any]) -> Any:
    if path and isinstance(get(data, path[:-1]), list):
        get(data, path[:-1]).append(copy.deepcopy(get(data, path)))
    return data


def rename_key(data: Any, path: Path_, draw: Callable[..., Any]) -> Any:
    if path and isinstance(path[-1], str):
        parent = get(data, path[:-1])
        parent[draw(KEYS)] = parent.pop(path[-1])
    return data


MUTATIONS = [
    drop,
    swap_type,
    insert_unknown_key,
    template_strings,
    deep_nesting,
    huge_number,
    none_value,
    list_where_dict,
    duplicate,
    rename_key,
]


@st.composite
def mutated_recipe(draw: st.DrawFn) -> tuple[dict[str, Any], int]:
    name = draw(st.sampled_from(sorted(STORED)))
    data = copy.deepcopy(STORED[name])
    count = draw(st.integers(min_value=1, max_value=4))
    for _ in range(count):
        path = draw(st.sampled_from(paths(data)))
        data = draw(st.sampled_from(MUTATIONS))(data, path, draw)
    return data, count


@examples(600)
@given(mutated_recipe(), st.data())
def test_mutated_stored_recipes(mutated: tuple[Any, int], data: st.DataObject) -> None:
    document, _ = mutated
    params = data.draw(params_for(document.get("params") if isinstance(document, dict) else {}))
    base_url = data.draw(BASE_URLS)
    exercise(dump(document), params, base_url)


# --- parameters -----------------------------------------------------------------------------


COMPILED = {
    path.name: prepare(load_recipe(path), source=str(path))
    for path in sorted(RECIPES.glob("*.yaml"))
}


@examples(400)
@given(st.sampled_from(sorted(COMPILED)), st.data())
def test_random_params_for_stored_recipes(name: str, data: st.DataObject) -> None:
    compiled = COMPILED[name]
    params = data.draw(params_for(compiled.recipe.params))
    base_url = data.draw(BASE_URLS)
    iteration = data.draw(st.integers(min_value=-(10**6), max_value=10**12))
    try:
        values = coerce_params(compiled.recipe.params, params, recipe_dir=RECIPES)
        plan = bind(compiled, values, base_url=base_url, iteration=iteration)
    except NorthstarError as error:
        assert_northstar_error(error)
        return
    check_plan(plan, params)
    assert plan.iteration == iteration


PARAM_SPECS = st.builds(
    Param,
    type=st.sampled_from(["string", "integer", "number", "boolean", "file"]),
    secret=st.booleans(),
)


@examples(400)
@given(
    st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True), PARAM_SPECS),
    st.data(),
)
def test_coerce_params_only_raises_param_errors(
    specs: dict[str, Param], data: st.DataObject
) -> None:
    raw = data.draw(params_for(specs))
    row = data.draw(st.none() | st.integers(min_value=1, max_value=10**6))
    try:
        values = coerce_params(specs, raw, row=row)
    except NorthstarError as caught:
        check_param_error(caught, specs, raw, row)
        return
    assert set(values) == set(specs)


def check_param_error(
    error: NorthstarError, specs: dict[str, Param], raw: dict[Any, Any], row: int | None
) -> None:
    assert_northstar_error(error)
    assert error.code in ("PARAM_INVALID", "PARAM_MISSING")
    if row is not None:
        assert error.message.startswith(f"row {row}: ")
    for name, spec in specs.items():
        value = raw.get(name)
        if spec.secret and isinstance(value, str) and len(value) > 3:
            assert value not in error.message


# --- names: every keyword of the format as an output, parameter, tab or step name ----------

KEYWORDS = sorted(
    {*FIELD_NAMES, "base_url", "iteration", "name_", "yes", "no", "true", "null", "__class__"}
)
NAMES = st.one_of(
    st.sampled_from(KEYWORDS),
    st.sampled_from(["id", "tab", "opened_by", "description", "effect", "regex", "url"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True),
    st.text(max_size=8),
)
REGEXES = st.sampled_from([None, "(", "id=(\\d+)", "(?P<x>a", "x{99999999999}", "(a)|b", "[z-a]"])


@st.composite
def named_recipe(draw: st.DrawFn) -> dict[str, Any]:
    """A recipe whose names are drawn from the format's own keywords (and anything else)."""
    param, output, extract_as, role, step_id = (draw(NAMES) for _ in range(5))
    used = draw(st.sampled_from([param, param, draw(NAMES)]))  # declared, or maybe not
    text = f"{{{{ {used} }}}}"
    return {
        "name": "named",
        "params": {param: {"type": "string", "default": "v"}},
        "tabs": {role: {"start": f"{{{{ base_url }}}}/?q={text}"}},
        "steps": [
            {"id": step_id, "tab": role, "fill": {"target": {"label": text}, "value": text}},
            {
                "id": f"{step_id}-save",
                "tab": role,
                "click": {"target": {"role": "button", "name": text}},
                "effect": "submit",
                "expect": [{"url": f"**/{text}"}],
            },
            {
                "id": "grab",
                "tab": role,
                "extract": {"as": extract_as, "from": "url", "regex": draw(REGEXES)},
            },
        ],
        "outputs": {
            output: {"tab": role, "from": "text", "target": {"text": text}, "regex": draw(REGEXES)}
        },
        "done_when": [{"tab": role, "visible": {"text": text}}],
    }


def run_on_fake_browser(plan: Plan) -> IterationResult:
    """The runner over the plan with a browser fake that always succeeds and reads ``v``."""
    script = Script(reads={(role, kind): "v" for role in plan.tabs for kind in ("text", "url")})
    runner = ProgramRunner(FakeHost(script), recorder=Recorder(script.events), sleep=no_sleep)
    return asyncio.run(runner.run_iteration(plan))


@examples(500)
@given(named_recipe())
def test_no_named_document_validates_and_then_fails_uncoded(document: dict[str, Any]) -> None:
    """Validation or a coded result; a run never meets an error the checks could have found."""
    try:
        recipe = parse_recipe(dump(document), source=SOURCE)
        compiled = prepare(recipe, source=SOURCE)
        values = coerce_params(recipe.params, {}, recipe_dir=RECIPES)
        plan = bind(compiled, values, base_url="http://127.0.0.1:9", iteration=1)
    except NorthstarError as error:
        assert_northstar_error(error)
        return
    result = run_on_fake_browser(plan)  # anything but an IterationResult fails the test
    assert result.state in (IterationState.VERIFIED, IterationState.FAILED), result.reason
    if result.state is IterationState.FAILED:  # only a regex that did not match "v"
        assert result.reason_code == "EXPECTATION_FAILED", result.reason
