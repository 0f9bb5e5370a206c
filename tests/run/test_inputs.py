"""Batch inputs: rows files read and validated before anything starts, errors name the row."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pytest

from northstar.errors import ParamInvalid, ParamMissing, UsageInvalid
from northstar.recipe import inputs
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
        list(read_params_source(write(tmp_path, name, text)).rows or [])  # rows read lazily


def test_a_value_given_for_a_secret_and_another_param_is_not_quoted_in_the_error() -> None:
    specs = {"token": Param(type="string", secret=True), "count": Param(type="integer")}
    with pytest.raises(ParamInvalid) as caught:
        coerce_params(specs, {"token": "s3cret-value", "count": "s3cret-value"})
    assert "s3cret-value" not in caught.value.message
    assert "'count' must be integer" in caught.value.message


# --- files that are not params files, and values at the edges of what a reader takes ------


def test_a_fifo_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer for ever
    with pytest.raises(UsageInvalid, match="is a FIFO"):
        read_params_source(fifo)


def test_a_device_is_refused_before_it_is_read(tmp_path: Path) -> None:
    zero = tmp_path / "rows.json"
    zero.symlink_to("/dev/zero")  # endless: reading it would fill the memory
    with pytest.raises(UsageInvalid, match="is a character device"):
        read_params_source(zero)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "rows.csv"
    folder.mkdir()
    with pytest.raises(UsageInvalid, match="is a directory"):
        read_params_source(folder)


def test_a_file_over_the_size_bound_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "MAX_PARAMS_BYTES", 100)
    with pytest.raises(UsageInvalid, match="larger than 100 bytes"):
        read_params_source(write(tmp_path, "rows.csv", "title\n" + "A\n" * 60))
    assert read_params_source(write(tmp_path, "ok.csv", "title\n" + "A\n" * 40)).rows


def test_the_documented_bound_is_16_mib() -> None:
    assert inputs.MAX_PARAMS_BYTES == 16 * 1024 * 1024


def test_a_csv_field_longer_than_csvs_default_limit_is_read(tmp_path: Path) -> None:
    long = "x" * (200 * 1024)  # csv refuses fields over 128 KiB unless told otherwise
    source = read_params_source(write(tmp_path, "rows.csv", f'title,copies\n"{long}",2\n'))
    assert list(source.rows or []) == [{"title": long, "copies": "2"}]
    assert csv.field_size_limit() == 128 * 1024  # the process-wide limit is put back


@pytest.mark.parametrize("mark", ["\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x85"])
def test_csv_rows_end_at_real_line_ends_only(tmp_path: Path, mark: str) -> None:
    text = f"title,copies\nA{mark}B,1\r\nC,2\rD,3\n"
    source = read_params_source(write(tmp_path, "rows.csv", text))
    assert list(source.rows or []) == [
        {"title": f"A{mark}B", "copies": "1"},
        {"title": "C", "copies": "2"},
        {"title": "D", "copies": "3"},
    ]


def test_a_quoted_line_break_stays_in_its_csv_value(tmp_path: Path) -> None:
    source = read_params_source(write(tmp_path, "rows.csv", 'title\n"two\nlines"\nB\n'))
    assert list(source.rows or []) == [{"title": "two\nlines"}, {"title": "B"}]


def test_jsonl_rows_end_at_newlines_only(tmp_path: Path) -> None:
    source = read_params_source(
        write(tmp_path, "rows.jsonl", '{"title": "A\u2028B"}\n{"title": "C"}\n')
    )
    assert list(source.rows or []) == [{"title": "A\u2028B"}, {"title": "C"}]


def test_a_json_integer_of_5000_digits_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageInvalid, match="integer too long") as caught:
        read_params_source(write(tmp_path, "rows.json", '{"copies": ' + "9" * 5000 + "}"))
    assert len(caught.value.message) < 200


def test_a_text_integer_of_5000_digits_is_param_invalid_in_a_short_line() -> None:
    with pytest.raises(ParamInvalid, match="more than 4300 digits") as caught:
        validate_rows(SPECS, [{"title": "A", "copies": "9" * 5000}], {})
    assert "row 1" in caught.value.message
    assert len(str(caught.value)) < 300


@pytest.mark.parametrize("depth", [100, 100_000])
def test_nested_json_is_a_usage_error(tmp_path: Path, depth: int) -> None:
    text = '{"title": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(UsageInvalid, match=r"a list or an object|nests too deeply"):
        read_params_source(write(tmp_path, "rows.json", text))


def test_a_list_value_in_a_row_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageInvalid, match="row 2: the value of 'title' is a list"):
        list(
            read_params_source(
                write(tmp_path, "rows.jsonl", '{"title": "A"}\n{"title": [1]}\n')
            ).rows
            or []
        )


@pytest.mark.parametrize(
    ("spec", "value", "says"),
    [
        (Param(type="string"), "A\x00B", "holds a NUL byte"),
        (Param(type="number"), float("nan"), "not a finite number"),
        (Param(type="number"), float("inf"), "not a finite number"),
        (Param(type="number"), "1e400", "not a finite number"),
    ],
)
def test_values_from_any_caller_that_a_run_cannot_take_are_refused(
    spec: Param, value: object, says: str
) -> None:
    """The API and MCP hand values over typed, not through a params file: same refusal."""
    with pytest.raises(ParamInvalid, match=says):
        coerce_params({"value": spec}, {"value": value})


ROW_SPECS = {"title": Param(type="string", required=True), "ratio": Param(type="number")}


@pytest.mark.parametrize(
    ("name", "text", "error", "says"),
    [
        ("rows.csv", "title,ratio,title\nA,1,B\n", UsageInvalid, "the header names 'title' twice"),
        ("rows.jsonl", '{"title": "A", "title": "B"}\n', UsageInvalid, "row 1 names 'title' twice"),
        ("rows.json", '[{"title": "A", "title": "B"}]', UsageInvalid, "names 'title' twice"),
        ("rows.jsonl", '{"title": "A", "ratio": NaN}\n', UsageInvalid, "row 1 holds NaN"),
        ("rows.json", '{"title": "A", "ratio": -Infinity}', UsageInvalid, "holds -Infinity"),
        ("rows.json", '{"title": "A", "ratio": 1e400}', UsageInvalid, "number too large to read"),
        ("rows.csv", "title,ratio\nA,1e400\n", ParamInvalid, "not a finite number"),
        ("rows.csv", "title,ratio\nA,NaN\n", ParamInvalid, "not a number"),
        ("rows.csv", "title\nA\x00B\n", UsageInvalid, "line 2 holds a NUL byte"),
        ("rows.jsonl", '{"title": "A"}\n{"title": "A\\u0000B"}\n', ParamInvalid, "NUL byte"),
    ],
)
def test_a_params_file_that_would_lose_cut_or_change_a_value_is_refused(
    tmp_path: Path, name: str, text: str, error: type[Exception], says: str
) -> None:
    def read_and_check() -> None:
        source = read_params_source(write(tmp_path, name, text))
        validate_rows(ROW_SPECS, source.rows or [source.constant], {})

    with pytest.raises(error, match=re.escape(says)):
        read_and_check()
