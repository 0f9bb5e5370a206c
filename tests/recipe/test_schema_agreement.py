"""The editor schema and the models agree: no document one accepts and the other rejects.

``northstar schema`` is pydantic's schema of the models ``validate`` loads with, with each
cross-field rule written beside its validator; this test is what holds the two together.
Documents come from two sources, 2000 of each:

- generated from the models themselves (every field of every model, by its type: values of
  the right type, of a wrong one, at and past each bound, "2" for 2, 2.0 for 2, near-miss
  roles, unknown keys), so a field added later is fuzzed with no edit here;
- mutations of the shipped recipes (valid documents changed in one to three places).

Each is checked with ``jsonschema``'s draft 2020-12 validator, as an editor checks a file,
and with ``Recipe.model_validate``, as ``validate`` loads one. What only ``validate`` checks
across the whole recipe (declared tab roles, unique step ids, template names) is not the
schema's to say, and is left to ``tests/recipe/test_properties.py``.
"""

from __future__ import annotations

import copy
import functools
import types
import typing
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from northstar.recipe.model import ARIA_ROLES, Recipe, Step
from northstar.recipe.schema import recipe_json_schema
from tests.recipe.test_properties import STORED, get, paths, put

AGREEMENT = settings(
    deadline=None,
    max_examples=2000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@functools.cache
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(recipe_json_schema())


def model_accepts(document: Any) -> bool:
    try:
        Recipe.model_validate(document)
    except ValidationError:
        return False
    return True


def assert_agree(document: Any) -> None:
    by_schema = validator().is_valid(document)
    by_model = model_accepts(document)
    if by_schema != by_model:
        why = [f"{list(e.absolute_path)}: {e.message}" for e in validator().iter_errors(document)]
        pytest.fail(f"schema says {by_schema}, model says {by_model}: {document!r} {why[:3]}")


# --- values by type --------------------------------------------------------------------------

WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(["", "2", "true", "no", "x", "3.0"]),
    st.integers(min_value=-2, max_value=3),
    st.sampled_from([2.0, 2.5, -1.0, float("inf")]),
    st.just([]),
    st.just({}),
)
INTEGERS = st.one_of(
    st.integers(min_value=-2, max_value=12),
    st.sampled_from([0, 60, 599, 600, 601, 604_800, 604_801, 600_000, 600_001, 10**20]),
    st.sampled_from([1.0, 3.0, 10.0, 0.5, 600_000.0, 600_001.0]),
)
PLAIN = st.sampled_from(["a", "t", "site", "save", "a-b.c_d", "9", "x_1"])
ODD = st.sampled_from(["", "Save", "x y", "A", "abc\n", " lead", "{{ t }}", "-a", "a/b"])
TEXTS = st.sampled_from([PLAIN, PLAIN, PLAIN, PLAIN, ODD, st.text(max_size=6)]).flatmap(
    lambda texts: texts
)
# Drawn from a list, not st.integers: Hypothesis draws small integers far more often.
ONE_IN_EIGHT = st.sampled_from([False] * 7 + [True])
ROLES = st.one_of(st.sampled_from(ARIA_ROLES), st.sampled_from(["buton", "Button", "iframe", ""]))


def for_annotation(annotation: Any, depth: int) -> st.SearchStrategy[Any]:
    """Values for a field of this type: mostly right, one time in eight wrong."""
    if depth < 0:
        return WRONG
    right = _right(annotation, depth)
    return ONE_IN_EIGHT.flatmap(lambda wrong: WRONG if wrong else right)


def _right(annotation: Any, depth: int) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _annotated(args[0], args[1:], depth)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([_right(arg, depth) for arg in args])
    if origin is typing.Literal:
        return st.one_of(st.sampled_from(args), st.sampled_from(["other", ""]))
    if origin is list:
        return st.lists(for_annotation(args[0], depth - 1), min_size=1, max_size=3)
    if origin is dict:
        keys = st.sampled_from(["a", "site", "t", ""])
        return st.dictionaries(keys, for_annotation(args[1], depth - 1), min_size=1, max_size=2)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_document(annotation, depth - 1)
    return _scalar(annotation)


def _annotated(base: Any, metadata: tuple[Any, ...], depth: int) -> st.SearchStrategy[Any]:
    names = " ".join(repr(item) for item in metadata)
    if "_known_role" in names:
        return ROLES
    if "_scalar_to_text" in names:
        return st.one_of(TEXTS, st.integers(-3, 3), st.sampled_from([1.5, True]))
    return _right(base, depth)


def _scalar(annotation: Any) -> st.SearchStrategy[Any]:
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return INTEGERS
    if annotation is float:
        return st.one_of(INTEGERS, st.floats(min_value=-1, max_value=700, allow_nan=False))
    if annotation is str:
        return TEXTS
    return st.none()


def _field_values(info: FieldInfo, depth: int) -> st.SearchStrategy[Any]:
    return for_annotation(info.rebuild_annotation(), depth)


@functools.cache  # built once per model and depth: building strategies is the slow part
def model_document(model: type[BaseModel], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    """A mapping of the model's fields by YAML name: the required ones (mostly), and of the
    others often exactly one (so "exactly one kind" holds as often as not), or a few; now
    and then a field the model does not have."""
    fields = {info.alias or name: info for name, info in model.model_fields.items()}
    values = {key: _field_values(info, depth) for key, info in fields.items()}
    required = [key for key, info in fields.items() if info.is_required()]
    optional = [*sorted(set(fields) - set(required)), "exepct"]  # a typo: always refused
    values["exepct"] = st.just([])

    @st.composite
    def document(draw: st.DrawFn) -> dict[str, Any]:
        chosen = [key for key in required if not draw(ONE_IN_EIGHT)]  # a missing one, rarely
        how_many = draw(st.sampled_from([0, 1, 1, 1, 1, 1, 2, 3]))
        chosen += draw(st.lists(st.sampled_from(optional), max_size=how_many, unique=True))
        return {key: draw(values[key]) for key in chosen}

    return document()


@st.composite
def recipe_document(draw: st.DrawFn) -> dict[str, Any]:
    """A recipe of generated parts; usually with a plain name and a tab its steps can use,
    so that the steps' own shapes decide (a recipe is only as valid as its worst part)."""
    document = draw(model_document(Recipe, depth=4))
    if not draw(ONE_IN_EIGHT):
        document["name"] = "fuzz"
    if not draw(ONE_IN_EIGHT):
        document["tabs"] = {"t": {"start": "/"}}
    step = model_document(Step, depth=3)
    document.setdefault("steps", draw(st.lists(step, min_size=1, max_size=2)))
    return document


@AGREEMENT
@given(recipe_document())
def test_generated_documents(document: dict[str, Any]) -> None:
    assert_agree(document)


# --- mutations of the shipped recipes --------------------------------------------------------

REPLACEMENTS = st.one_of(
    WRONG, TEXTS, INTEGERS, ROLES, st.sampled_from([{"role": "button"}, {"label": "x"}])
)


@st.composite
def mutated_recipe(draw: st.DrawFn) -> Any:
    document = copy.deepcopy(STORED[draw(st.sampled_from(sorted(STORED)))])
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        place = draw(st.sampled_from(paths(document)))
        if place and draw(st.booleans()) and isinstance(get(document, place[:-1]), dict):
            del get(document, place[:-1])[place[-1]]  # a field left out
        else:
            document = put(document, place, copy.deepcopy(draw(REPLACEMENTS)))
    return document


@AGREEMENT
@given(mutated_recipe())
def test_mutated_shipped_recipes(document: Any) -> None:
    assert_agree(document)


def test_the_shipped_recipes_are_accepted_by_both() -> None:
    for name, document in STORED.items():
        assert validator().is_valid(document), name
        assert model_accepts(document), name
