"""Batch inputs: rows files read and validated before anything starts, errors name the row."""

from __future__ import annotations

from pathlib import Path

import pytest

from northstar.errors import ParamInvalid, ParamMissing, UsageInvalid
from northstar.recipe.inputs import read_params_source, validate_rows
from northstar.recipe.model import Param
from northstar.recipe.params import coerce_params

SPECS = {
    "title": Param(type="string", required=True),
    "copies": Param(type="integer", default=1),
    "token": Param(type="string", secret=True),
}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_rows_are_typed(tmp_path: Path) -> None:
    source = read_params_source(write(tmp_path, "rows.csv", "title,copies\nFirst,2\nSecond,\n"))
    assert source.rows is not None
    rows = validate_rows(SPECS, source.rows, {})
    assert rows[0]["copies"] == 2
    assert rows[1]["copies"] == 1  # an empty cell takes the default


def test_jsonl_rows(tmp_path: Path) -> None:
    text = '{"title": "A", "copies": 3}\n\n{"title": "B"}\n'
    source = read_params_source(write(tmp_path, "rows.jsonl", text))
    assert [r["title"] for r in validate_rows(SPECS, source.rows or [], {})] == ["A", "B"]


def test_json_object_is_constant_and_list_is_rows(tmp_path: Path) -> None:
    assert read_params_source(write(tmp_path, "a.json", '{"title": "x"}')).constant == {
        "title": "x"
    }
    rows = read_params_source(write(tmp_path, "b.json", '[{"title": "x"}, {"title": "y"}]')).rows
    assert rows is not None
    assert len(rows) == 2


def test_constant_values_apply_to_every_row_and_rows_win(tmp_path: Path) -> None:
    source = read_params_source(write(tmp_path, "rows.csv", "title,copies\nA,\nB,5\n"))
    rows = validate_rows(SPECS, source.rows or [], {"copies": "7", "title": "ignored"})
    assert [(r["title"], r["copies"]) for r in rows] == [("A", 7), ("B", 5)]


def test_bad_row_is_reported_with_its_number(tmp_path: Path) -> None:
    source = read_params_source(write(tmp_path, "rows.csv", "title,copies\nA,1\nB,two\nC,3\n"))
    with pytest.raises(ParamInvalid) as caught:
        validate_rows(SPECS, source.rows or [], {})
    assert "row 2" in caught.value.message


def test_missing_required_value_names_the_row(tmp_path: Path) -> None:
    source = read_params_source(write(tmp_path, "rows.csv", 'title\nA\n""\n'))
    with pytest.raises(ParamMissing) as caught:
        validate_rows(SPECS, source.rows or [], {})
    assert "row 2" in caught.value.message


def test_secret_value_is_not_echoed_in_errors(tmp_path: Path) -> None:
    specs = {"pin": Param(type="integer", secret=True)}
    with pytest.raises(ParamInvalid) as caught:
        validate_rows(specs, [{"pin": "hunter2"}], {})
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("rows.csv", ""),
        ("rows.csv", "title\n"),
        ("rows.jsonl", "[1, 2]\n"),
        ("rows.jsonl", "{not json}\n"),
        ("rows.json", "42"),
        ("rows.txt", "title\nA\n"),
        ("rows.csv", "title\nA,extra\n"),
    ],
)
def test_unreadable_rows_files_are_usage_errors(tmp_path: Path, name: str, text: str) -> None:
    with pytest.raises(UsageInvalid):
        read_params_source(write(tmp_path, name, text))


def test_a_value_given_for_a_secret_and_another_param_is_not_quoted_in_the_error() -> None:
    specs = {"token": Param(type="string", secret=True), "count": Param(type="integer")}
    with pytest.raises(ParamInvalid) as caught:
        coerce_params(specs, {"token": "s3cret-value", "count": "s3cret-value"})
    assert "s3cret-value" not in caught.value.message
    assert "'count' must be integer" in caught.value.message
