"""Inputs per iteration: constant parameters, or one row per iteration from a file.

A rows file is CSV (a header line, then one row per iteration) or JSON Lines (one object
per line); a ``.json`` file holds one object (constant parameters) or a list of objects
(rows). Every row is validated against the recipe's parameters before the first
iteration starts, and an error names the row (1-based, counting data rows).
Constant ``-p`` values apply to every row; a row's own value wins over them.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from northstar.errors import UsageInvalid
from northstar.recipe.model import Param
from northstar.recipe.params import coerce_params

__all__ = ["ParamsSource", "read_params_source", "validate_rows"]


class ParamsSource:
    """Parameters read from a file: either ``constant`` or ``rows`` is set."""

    def __init__(
        self, constant: dict[str, Any] | None = None, rows: list[dict[str, Any]] | None = None
    ) -> None:
        self.constant = constant or {}
        self.rows = rows


def read_params_source(path: str | Path) -> ParamsSource:
    """Read a params file by its extension: .csv and .jsonl are rows, .json either."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageInvalid(
            f"cannot read params file {file}: {exc.__class__.__name__}",
            fix="Pass a readable UTF-8 .csv, .jsonl or .json file.",
        ) from None
    suffix = file.suffix.lower()
    if suffix == ".csv":
        return ParamsSource(rows=_csv_rows(text, file))
    if suffix == ".jsonl":
        return ParamsSource(rows=_jsonl_rows(text, file))
    if suffix == ".json":
        return _json_source(text, file)
    raise UsageInvalid(
        f"params file {file} must end in .csv, .jsonl or .json", fix="Rename or convert it."
    )


def _csv_rows(text: str, file: Path) -> list[dict[str, Any]]:
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames:
        raise UsageInvalid(f"{file}: no header line", fix="Put parameter names on the first line.")
    rows: list[dict[str, Any]] = []
    for number, row in enumerate(reader, start=1):
        if None in row:
            raise UsageInvalid(
                f"{file}: row {number} has more values than the header has names",
                fix="Quote values that contain commas.",
            )
        rows.append({k.strip(): v for k, v in row.items() if k is not None})
    return _non_empty(rows, file)


def _jsonl_rows(text: str, file: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for number, line in enumerate((ln for ln in text.splitlines() if ln.strip()), start=1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageInvalid(
                f"{file}: row {number} is not valid JSON ({exc.msg})", fix="One object per line."
            ) from None
        if not isinstance(row, dict):
            raise UsageInvalid(f"{file}: row {number} is not an object", fix="One object per line.")
        rows.append(row)
    return _non_empty(rows, file)


def _json_source(text: str, file: Path) -> ParamsSource:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageInvalid(f"{file}: not valid JSON ({exc.msg})", fix="Fix the JSON.") from None
    if isinstance(data, dict):
        return ParamsSource(constant=data)
    if isinstance(data, list) and all(isinstance(row, dict) for row in data):
        return ParamsSource(rows=_non_empty(data, file))
    raise UsageInvalid(
        f"{file}: expected an object or a list of objects", fix='Use {"name": value}.'
    )


def _non_empty(rows: list[dict[str, Any]], file: Path) -> list[dict[str, Any]]:
    if not rows:
        raise UsageInvalid(f"{file}: no rows", fix="Add at least one row of parameters.")
    return rows


def _given(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's non-empty values: an empty CSV cell leaves the constant or default."""
    return {k: v for k, v in row.items() if v is not None and v != ""}


def validate_rows(
    specs: Mapping[str, Param],
    rows: Sequence[Mapping[str, Any]],
    constant: Mapping[str, Any],
    *,
    recipe_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """Typed values for every row, all checked before anything starts."""
    return [
        coerce_params(specs, {**constant, **_given(row)}, row=number, recipe_dir=recipe_dir)
        for number, row in enumerate(rows, start=1)
    ]
