"""Inputs per iteration: constant parameters, or one row per iteration from a file.

A rows file is CSV (a header line, then one row per iteration) or JSON Lines (one object
per line); a ``.json`` file holds one object (constant parameters) or a list of objects
(rows). Every row is validated against the recipe's parameters before the first
iteration starts, and an error names the row (1-based, counting data rows). A ``.csv`` or
``.jsonl`` file is read a row at a time (``RowsFile``): a bad row is refused, with its
line, before the rest is read, and a batch of any length is checked in bounded memory.
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
header, a JSON object's key) and a NUL byte in a row are refused: each would
silently lose or cut a value.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from northstar.errors import UsageInvalid
from northstar.recipe._files import open_bounded, read_bounded_text
from northstar.recipe._values import load_json, scalar_values
from northstar.recipe.model import Param
from northstar.recipe.params import BUILTIN_NAMES, coerce_params
from northstar.recipe.rows_file import RowsFile

__all__ = [
    "MAX_PARAMS_BYTES",
    "Columns",
    "ParamsSource",
    "RowsFile",
    "column_selector",
    "read_params_source",
    "select_columns",
    "typed_row",
    "typed_rows",
    "validate_rows",
]

MAX_PARAMS_BYTES = 16 << 20  # 16 MiB: a large batch, and a bound on the memory it takes
_SUFFIXES = (".csv", ".jsonl", ".json")
_STREAMED = (".csv", ".jsonl")  # one row a line: read a row at a time (rows_file)


class ParamsSource:
    """Parameters read from a file: either ``constant`` or ``rows`` is set."""

    def __init__(
        self,
        constant: dict[str, Any] | None = None,
        rows: list[dict[str, Any]] | RowsFile | None = None,
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

    if suffix in _STREAMED:
        # Refused now if it is no regular file or too large; its rows are read as they are needed.
        open_bounded(file, limit=MAX_PARAMS_BYTES, what="params file", refuse=refuse).close()
        return ParamsSource(rows=RowsFile(file, limit=MAX_PARAMS_BYTES))
    text = read_bounded_text(file, limit=MAX_PARAMS_BYTES, what="params file", refuse=refuse)
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise refuse(f"line {line} holds a NUL byte", "Remove the NUL byte; values are text.")
    return _json_source(text, file)


def _json_source(text: str, file: Path) -> ParamsSource:
    data = load_json(text, file, "the file")
    if isinstance(data, dict):
        return ParamsSource(constant=scalar_values(data, file, "the object"))
    if isinstance(data, list) and all(isinstance(row, dict) for row in data):
        rows = [scalar_values(row, file, f"row {n}") for n, row in enumerate(data, start=1)]
        return ParamsSource(rows=_non_empty(rows, file))
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
        yield number, *typed_row(specs, number, row, constant, recipe_dir=recipe_dir)


def typed_row(
    specs: Mapping[str, Param],
    number: int,
    row: Mapping[str, Any],
    constant: Mapping[str, Any],
    *,
    recipe_dir: Path | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Row ``number``'s given values (its own over the constant ones) and typed values."""
    given = {**constant, **_given(row)}
    return given, coerce_params(specs, given, row=number, recipe_dir=recipe_dir)


def validate_rows(
    specs: Mapping[str, Param],
    rows: Iterable[Mapping[str, Any]],
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
    as_params = column_selector(specs, columns, file)
    return [as_params(row) for row in rows]


def column_selector(
    specs: Mapping[str, Param], columns: Columns, file: str
) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """What ``select_columns`` does to one row, for rows read one at a time (``RowsFile``);
    a ``--column`` naming no parameter is refused before any row is read."""
    known = set(specs) | BUILTIN_NAMES
    unknown_param = sorted(set(columns.rename) - known)
    if unknown_param:
        raise UsageInvalid(
            f"--column {unknown_param[0]}=...: the recipe has no parameter {unknown_param[0]!r}",
            fix=f"Map a column to one of: {', '.join(sorted(specs)) or '(none)'}.",
        )
    by_column = {column: name for name, column in columns.rename.items()}
    return lambda row: _row_as_params(row, by_column, known, columns, file)


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
