"""The one run-request builder: the rows-vs-repeat rule, the bounds, one pass over the rows.

The CLI, the Python API and MCP each give it their inputs; what only one of them does (a
secret prompt, a folder check) is handed in. The API is checked here through its own
``build_request``, so the rule holds for it exactly as for the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from northstar.api import build_request as api_request
from northstar.composition import load_compiled
from northstar.errors import ParamMissing, RepeatOptionsInvalid, UsageInvalid
from northstar.run.requests import RunInputs, build_run_request
from tests.conftest import RECIPES

CONTACT = RECIPES / "contact-form.yaml"
BASE = "http://127.0.0.1:9"


def build(inputs: RunInputs, **hooks: Any) -> Any:
    return build_run_request(CONTACT, load_compiled(CONTACT), inputs, **hooks)


def test_rows_run_one_iteration_each_and_constant_parameters_repeat() -> None:
    rows = build(RunInputs(rows=[{"name": "A"}, {"name": "B"}], base_url=BASE))
    assert ([r["name"] for r in rows.rows], rows.repeat.count) == (["A", "B"], 2)
    same = build(RunInputs(params={"name": "C"}, repeat=3, interval=2, base_url=BASE))
    assert (len(same.rows), same.repeat.count, same.repeat.interval_s) == (1, 3, 2)
    assert build(RunInputs(params={"name": "C"}, base_url=BASE)).repeat.count == 1


def test_a_repeat_other_than_the_rows_is_refused_in_the_front_ends_words() -> None:
    inputs = RunInputs(rows=[{"name": "A"}, {"name": "B"}], repeat=3, base_url=BASE)
    with pytest.raises(UsageInvalid, match=r"repeat 3 does not match the 2 rows given$"):
        build(inputs)
    worded = replace(inputs, repeat_named="--repeat", rows_named="of r.csv")
    with pytest.raises(UsageInvalid, match=r"--repeat 3 does not match the 2 rows of r\.csv"):
        build(worded)
    with pytest.raises(UsageInvalid, match="no rows given"):
        build(RunInputs(rows=[], base_url=BASE))


def test_the_bounds_are_checked_before_a_secret_is_asked_for() -> None:
    asked: list[str] = []

    def ask(specs: Mapping[str, Any], constant: Mapping[str, Any], rows: Any) -> dict[str, str]:
        asked.append("asked")
        return {}

    with pytest.raises(RepeatOptionsInvalid):
        build(RunInputs(params={"name": "C"}, repeat=0, base_url=BASE), complete_params=ask)
    assert asked == []
    build(RunInputs(params={"name": "C"}, base_url=BASE), complete_params=ask)
    assert asked == ["asked"]


def test_each_row_is_typed_checked_and_rendered_in_one_pass_in_order() -> None:
    seen: list[tuple[int, str]] = []

    def check(number: int, given: Mapping[str, Any], typed: Mapping[str, Any]) -> None:
        seen.append((number, typed["name"]))

    rows = [{"name": "A"}, {"name": "B"}, {}]
    with pytest.raises(ParamMissing, match="row 3: parameter 'name' is required"):
        build(RunInputs(rows=rows, base_url=BASE), check_row=check)
    assert seen == [(1, "A"), (2, "B")]  # row 3 failed after rows 1 and 2 were checked
    with pytest.raises(ParamMissing, match="base"):  # rendering is part of the pass
        build(RunInputs(rows=rows[:2]), check_row=check)
    assert seen[2:] == [(1, "A")]  # row 1 was checked, then its rendering refused it


def test_the_python_api_follows_the_rows_rule_of_the_cli(tmp_path: Path) -> None:
    lanes = (1, False, False, False)
    common: dict[str, Any] = {
        "interval": 0,
        "base_url": BASE,
        "project": "p",
        "profile": None,
        "lanes": lanes,
    }
    rows = [{"name": "A"}, {"name": "B"}]
    assert api_request(CONTACT, rows, repeat=None, **common).repeat.count == 2
    with pytest.raises(UsageInvalid, match="repeat 3 does not match the 2 rows"):
        api_request(CONTACT, rows, repeat=3, **common)
    with pytest.raises(UsageInvalid, match="no rows"):
        api_request(CONTACT, [], repeat=None, **common)
    assert api_request(CONTACT, {"name": "A"}, repeat=4, **common).repeat.count == 4
