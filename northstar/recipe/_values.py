"""One row's values as a params file spells them: checked, refused with a reason.

Shared by the whole-file reader (``northstar.recipe.inputs``, a ``.json`` file) and the
streaming one (``northstar.recipe.rows_file``, ``.csv`` and ``.jsonl``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from northstar.errors import UsageInvalid

__all__ = ["csv_row", "json_row", "load_json", "refuse_twice", "scalar_values"]

_ONCE = "Give each parameter once."
_AS_TEXT = "Write a long number as a string."


def csv_row(row: Mapping[str | None, Any], number: int, file: Path) -> dict[str, Any]:
    if None in row:
        raise UsageInvalid(
            f"{file}: row {number} has more values than the header has names",
            fix="Quote values that contain commas.",
        )
    return {str(k).strip(): v for k, v in row.items()}


def json_row(line: str, number: int, file: Path) -> dict[str, Any]:
    row = load_json(line, file, f"row {number}")
    if not isinstance(row, dict):
        raise UsageInvalid(f"{file}: row {number} is not an object", fix="One object per line.")
    return scalar_values(row, file, f"row {number}")


def _first_twice(names: Iterable[str]) -> str | None:
    """The first name that comes a second time, if any."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def refuse_twice(names: Sequence[str], file: Path, where: str) -> None:
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


def load_json(text: str, file: Path, where: str) -> Any:
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


def scalar_values(row: dict[str, Any], file: Path, where: str) -> dict[str, Any]:
    """A row's values are text, numbers, booleans or null: parameters are never lists."""
    for name, value in row.items():
        if isinstance(value, list | dict):
            raise UsageInvalid(
                f"{file}: {where}: the value of {name!r} is a list or an object",
                fix="Give each parameter a text, number or boolean value.",
            )
    return row
