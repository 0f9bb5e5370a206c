"""Inputs per iteration: constant parameters, or one row per iteration from a file.

A rows file is CSV (a header line, then one row per iteration) or JSON Lines (one object
per line); a ``.json`` file holds one object (constant parameters) or a list of objects
(rows). Every row is validated against the recipe's parameters before the first
iteration starts, and an error names the row (1-based, counting data rows).
Constant ``-p`` values apply to every row; a row's own value wins over them.

Columns a recipe has no parameter for (a spreadsheet's notes) are refused by name unless
the run says what they are: ``Columns`` maps a column to a parameter (``--column
PARAM=COLUMN``), drops named ones (``--ignore-column NAME``) or every one that is not a
parameter (``--ignore-extra-columns``); ``select_columns`` applies it before validation.

A params file is a regular file of at most ``MAX_PARAMS_BYTES`` (a FIFO, a device or a
directory is refused before anything is read). A CSV field may be as long as the file;
rows end at real line ends only (``\n``, ``\r\n``, ``\r``), so a U+2028 inside a value stays
in it. A JSON value is text, a number, a boolean or null: a list or object nested in a
row is refused, as is an integer longer than Python reads (4300 digits), ``NaN``,
``Infinity`` or a number too large for a float (``1e400``). A name given twice (a CSV
header, a JSON object's key) and a NUL byte anywhere in the file are refused: each would
silently lose or cut a value.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from northstar.errors import UsageInvalid
from northstar.recipe._files import read_bounded_text
from northstar.recipe.model import Param
from northstar.recipe.params import BUILTIN_NAMES, coerce_params

__all__ = [
    "MAX_PARAMS_BYTES",
    "Columns",
    "ParamsSource",
    "read_params_source",
    "select_columns",
    "typed_rows",
    "validate_rows",
]

MAX_PARAMS_BYTES = 16 << 20  # 16 MiB: a large batch, and a bound on the memory it takes
_SUFFIXES = (".csv", ".jsonl", ".json")
_ONCE = "Give each parameter once."
_AS_TEXT = "Write a long number as a string."


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
    suffix = file.suffix.lower()
    if suffix not in _SUFFIXES:
        raise UsageInvalid(
            f"params file {file} must end in .csv, .jsonl or .json", fix="Rename or convert it."
        )

    def refuse(message: str, fix: str) -> UsageInvalid:
        return UsageInvalid(f"{file}: {message}", fix=fix)

    text = read_bounded_text(file, limit=MAX_PARAMS_BYTES, what="params file", refuse=refuse)
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise refuse(f"line {line} holds a NUL byte", "Remove the NUL byte; values are text.")
    if suffix == ".csv":
        return ParamsSource(rows=_csv_rows(text, file))
    if suffix == ".jsonl":
        return ParamsSource(rows=_jsonl_rows(text, file))
    return _json_source(text, file)


@contextmanager
def _fields_up_to_the_file_size() -> Iterator[None]:
    """csv's default field limit (128 KiB) is below the file bound; lift it while reading."""
    previous = csv.field_size_limit(MAX_PARAMS_BYTES)
    try:
        yield
    finally:
        csv.field_size_limit(previous)


def _csv_rows(text: str, file: Path) -> list[dict[str, Any]]:
    # newline="": csv itself finds the line ends, so quoted newlines and U+2028 stay values.
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[dict[str, Any]] = []
    with _fields_up_to_the_file_size():
        try:
            if not reader.fieldnames:
                raise UsageInvalid(
                    f"{file}: no header line", fix="Put parameter names on the first line."
                )
            _refuse_twice([name.strip() for name in reader.fieldnames], file, "the header")
            for number, row in enumerate(reader, start=1):
                rows.append(_csv_row(row, number, file))
        except csv.Error as exc:
            raise UsageInvalid(
                f"{file}: line {reader.line_num} is not valid CSV ({exc})",
                fix="Quote values that contain commas, quotes or line breaks.",
            ) from None
    return _non_empty(rows, file)


def _csv_row(row: Mapping[str | None, Any], number: int, file: Path) -> dict[str, Any]:
    if None in row:
        raise UsageInvalid(
            f"{file}: row {number} has more values than the header has names",
            fix="Quote values that contain commas.",
        )
    return {str(k).strip(): v for k, v in row.items()}


def _jsonl_rows(text: str, file: Path) -> list[dict[str, Any]]:
    # Only "\n" ends a line: JSON text may hold U+2028 and other characters splitlines sees.
    lines = (line for line in text.split("\n") if line.strip())
    return _non_empty([_json_row(line, n, file) for n, line in enumerate(lines, 1)], file)


def _json_row(line: str, number: int, file: Path) -> dict[str, Any]:
    row = _load_json(line, file, f"row {number}")
    if not isinstance(row, dict):
        raise UsageInvalid(f"{file}: row {number} is not an object", fix="One object per line.")
    return _scalar_values(row, file, f"row {number}")


def _json_source(text: str, file: Path) -> ParamsSource:
    data = _load_json(text, file, "the file")
    if isinstance(data, dict):
        return ParamsSource(constant=_scalar_values(data, file, "the object"))
    if isinstance(data, list) and all(isinstance(row, dict) for row in data):
        rows = [_scalar_values(row, file, f"row {n}") for n, row in enumerate(data, start=1)]
        return ParamsSource(rows=_non_empty(rows, file))
    raise UsageInvalid(
        f"{file}: expected an object or a list of objects", fix='Use {"name": value}.'
    )


def _first_twice(names: Iterable[str]) -> str | None:
    """The first name that comes a second time, if any."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def _refuse_twice(names: Sequence[str], file: Path, where: str) -> None:
    twice = _first_twice(names)
    if twice is not None:
        raise UsageInvalid(f"{file}: {where} names {twice!r} twice", fix=_ONCE)


class _Refused(ValueError):
    """A JSON value ``json`` would read but a parameter must not hold: (message, fix)."""


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _Refused(f"holds a number too large to read ({text[:20]})", _AS_TEXT)
    return number


def _no_constant(name: str) -> float:
    raise _Refused(f"holds {name}, which is not a number", "Write numbers in digits.")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    twice = _first_twice(key for key, _ in pairs)
    if twice is not None:
        raise _Refused(f"names {twice!r} twice", _ONCE)
    return dict(pairs)


def _load_json(text: str, file: Path, where: str) -> Any:
    """Parsed JSON; a syntax error, an over-long integer, NaN, Infinity, a float overflow,
    a key given twice or too deep nesting is a usage error."""
    try:
        return json.loads(
            text, parse_float=_finite, parse_constant=_no_constant, object_pairs_hook=_unique_keys
        )
    except _Refused as exc:
        problem, fix = exc.args
    except json.JSONDecodeError as exc:
        problem, fix = f"is not valid JSON ({exc.msg})", "Fix the JSON."
    except ValueError:  # int() refuses more digits than sys.get_int_max_str_digits()
        problem, fix = "holds an integer too long to read", _AS_TEXT
    except RecursionError:
        problem, fix = "nests too deeply", "Give parameters as one flat object per row."
    raise UsageInvalid(f"{file}: {where} {problem}", fix=fix)


def _scalar_values(row: dict[str, Any], file: Path, where: str) -> dict[str, Any]:
    """A row's values are text, numbers, booleans or null: parameters are never lists."""
    for name, value in row.items():
        if isinstance(value, list | dict):
            raise UsageInvalid(
                f"{file}: {where}: the value of {name!r} is a list or an object",
                fix="Give each parameter a text, number or boolean value.",
            )
    return row


def _non_empty(rows: list[dict[str, Any]], file: Path) -> list[dict[str, Any]]:
    if not rows:
        raise UsageInvalid(f"{file}: no rows", fix="Add at least one row of parameters.")
    return rows


def _given(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's non-empty values: an empty CSV cell leaves the constant or default."""
    return {k: v for k, v in row.items() if v is not None and v != ""}


def typed_rows(
    specs: Mapping[str, Param],
    rows: Iterable[Mapping[str, Any]],
    constant: Mapping[str, Any],
    *,
    recipe_dir: Path | None = None,
) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
    """Each row's number, the values given for it, and its typed values, one row at a time.

    A row's own non-empty values win over the constant ones; an error names the row.
    """
    for number, row in enumerate(rows, start=1):
        given = {**constant, **_given(row)}
        yield number, given, coerce_params(specs, given, row=number, recipe_dir=recipe_dir)


def validate_rows(
    specs: Mapping[str, Param],
    rows: Sequence[Mapping[str, Any]],
    constant: Mapping[str, Any],
    *,
    recipe_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """Typed values for every row, all checked before anything starts."""
    return [typed for _, _, typed in typed_rows(specs, rows, constant, recipe_dir=recipe_dir)]


@dataclass(frozen=True)
class Columns:
    """What a rows file's columns are: ``rename`` maps a parameter to the column holding it."""

    rename: Mapping[str, str] = field(default_factory=dict)
    ignore: Collection[str] = ()
    ignore_extra: bool = False

    @classmethod
    def from_options(
        cls, pairs: Sequence[str], ignore: Sequence[str], ignore_extra: bool
    ) -> Columns:
        """From ``--column PARAM=COLUMN``, ``--ignore-column`` and ``--ignore-extra-columns``."""
        rename: dict[str, str] = {}
        for pair in pairs:
            name, sep, column = pair.partition("=")
            if not sep or not name.strip() or not column.strip():
                raise UsageInvalid(
                    f"--column {pair!r} is not PARAM=COLUMN", fix="Write --column title=Headline."
                )
            rename[name.strip()] = column.strip()
        return cls(rename, tuple(ignore), ignore_extra)


def select_columns(
    rows: Sequence[Mapping[str, Any]], specs: Mapping[str, Param], columns: Columns, file: str
) -> list[dict[str, Any]]:
    """Each row as parameters: mapped columns renamed, ignored ones dropped, others refused."""
    known = set(specs) | BUILTIN_NAMES
    unknown_param = sorted(set(columns.rename) - known)
    if unknown_param:
        raise UsageInvalid(
            f"--column {unknown_param[0]}=...: the recipe has no parameter {unknown_param[0]!r}",
            fix=f"Map a column to one of: {', '.join(sorted(specs)) or '(none)'}.",
        )
    by_column = {column: name for name, column in columns.rename.items()}
    return [_row_as_params(row, by_column, known, columns, file) for row in rows]


def _row_as_params(
    row: Mapping[str, Any],
    by_column: Mapping[str, str],
    known: set[str],
    columns: Columns,
    file: str,
) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for column, value in row.items():
        name = by_column.get(column, column)
        if column in columns.ignore or (name not in known and columns.ignore_extra):
            continue
        if name not in known:
            raise UsageInvalid(
                f"{file}: column {column!r} is not a parameter of the recipe",
                fix=f"Leave it out with --ignore-column {column!r} (or --ignore-extra-columns), "
                f"or map it with --column PARAM={column!r}.",
            )
        params[name] = value
    return params
