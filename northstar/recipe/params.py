"""Parameter values: coerce raw input to each parameter's declared type, or say why not.

Values arrive as text from the command line and CSV rows, or typed from JSON. Coercion
is strict about meaning (``"1.5"`` is no integer, ``"maybe"`` no boolean) and errors name
the parameter and, for batch input, the row, never a secret value.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from northstar.errors import ParamInvalid, ParamMissing
from northstar.recipe.model import Param
from northstar.redaction import REDACTED, redact

__all__ = [
    "BUILTIN_NAMES",
    "coerce_params",
    "existing_file",
    "file_digest",
    "params_fingerprint",
    "row_values",
]

BUILTIN_NAMES = frozenset({"base_url", "iteration"})
_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}
# Plain decimal notation only: no "1_000", no "inf" or "nan" from a person's text.
_INTEGER = re.compile(r"[+-]?[0-9]+")
_MAX_DIGITS = 4300  # Python's own limit for reading an int from text (sys.int_info)
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def coerce_params(
    specs: Mapping[str, Param],
    raw: Mapping[str, Any],
    *,
    row: int | None = None,
    recipe_dir: Path | None = None,
) -> dict[str, Any]:
    """Typed values for every declared parameter (defaults filled in, unknown names refused).

    A relative file path given by a person is read from the current directory; a file
    param's default is written in the recipe, so it is read from the recipe's folder.
    """
    unknown = sorted(str(name) for name in set(raw) - set(specs) - BUILTIN_NAMES)
    if unknown:
        raise ParamInvalid(
            f"{_where(row)}unknown parameter {unknown[0]!r}",
            fix=f"Declared parameters: {', '.join(sorted(specs)) or 'none'}.",
        )
    values: dict[str, Any] = {}
    # A value quoted in an error may also be a secret's (the same text given twice).
    secrets = {str(raw[n]) for n, spec in specs.items() if spec.secret and raw.get(n)}
    for name, spec in specs.items():
        if name in raw and raw[name] is not None and raw[name] != "":
            values[name] = _coerce(name, spec, raw[name], row, secrets)
        elif spec.required:
            raise ParamMissing(f"{_where(row)}parameter {name!r} is required")
        elif spec.default is not None:
            default = spec.default
            if spec.type == "file" and recipe_dir is not None:
                default = str(recipe_dir / str(default))
            values[name] = _coerce(name, spec, default, row, secrets)
        else:
            values[name] = "" if spec.type in ("string", "enum") else None
    return values


def _where(row: int | None) -> str:
    return f"row {row}: " if row is not None else ""


def _coerce(name: str, spec: Param, value: Any, row: int | None, secrets: set[str]) -> Any:
    try:
        return _CONVERTERS[spec.type](value, spec)
    except (ValueError, TypeError, OverflowError) as exc:
        # A converter's message may quote the value, so a secret gets none of it.
        detail = "(secret value not shown)" if spec.secret else f"got {_shown(value)}: {exc}"
        detail = redact(detail, secrets)
        raise ParamInvalid(
            f"{_where(row)}parameter {name!r} must be {spec.type}, {detail}",
            fix=f"Pass a {spec.type} value for {name!r}.",
        ) from None


def _shown(value: Any) -> str:
    """The value as an error shows it: its repr, cut short (a 5,000-digit number...)."""
    try:
        text = repr(value) if isinstance(value, str | int | float | bool) else type(value).__name__
    except ValueError:  # an int too long for repr
        text = "a very long number"
    return text if len(text) <= 60 else text[:57] + "..."


def _to_string(value: Any, spec: Param) -> str:
    if isinstance(value, bool | dict | list):
        raise TypeError("not text")
    text = str(value)
    if "\x00" in text:  # a C string ends there: a browser or a file name would cut it short
        raise ValueError("it holds a NUL byte")
    return text


def _to_integer(value: Any, spec: Param) -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError("not a whole number")
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        if len(value.strip().lstrip("+-")) > _MAX_DIGITS:
            raise ValueError(f"more than {_MAX_DIGITS} digits")
        return int(value.strip())
    raise ValueError("not a whole number")


def _to_number(value: Any, spec: Param) -> float:
    if isinstance(value, bool):
        raise TypeError("not a number")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        number = float(value.strip())
    else:
        raise ValueError("not a number")
    if not math.isfinite(number):  # 1e400 reads as infinity; NaN from a JSON or API caller
        raise ValueError("not a finite number")
    return number


def _to_boolean(value: Any, spec: Param) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("use true or false")


def _to_enum(value: Any, spec: Param) -> str:
    text = _to_string(value, spec)
    if text not in (spec.choices or []):
        raise ValueError(f"choose one of {', '.join(spec.choices or [])}")
    return text


def _to_file(value: Any, spec: Param) -> str:
    path = existing_file(_to_string(value, spec))
    if path is None:
        raise ValueError("no such file")
    return str(path)


def existing_file(text: str, base: Path | None = None) -> Path | None:
    """The absolute path of an existing file, or ``None`` (unknown ``~user``, too long...)."""
    try:
        path = Path(text).expanduser()
        if base is not None and not path.is_absolute():
            path = base / path
        return path.resolve() if path.is_file() else None
    except (OSError, RuntimeError, ValueError):
        return None


_CONVERTERS = {
    "string": _to_string,
    "integer": _to_integer,
    "number": _to_number,
    "boolean": _to_boolean,
    "enum": _to_enum,
    "file": _to_file,
}


def file_digest(path: str | Path) -> str:
    """sha256 of a selected file's bytes, so a run notices when the file changes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def params_fingerprint(specs: Mapping[str, Param], values: Mapping[str, Any]) -> str:
    """A digest of the values with each secret replaced by its own digest first."""
    safe = {
        name: (_secret_digest(value) if specs.get(name, Param()).secret else value)
        for name, value in sorted(values.items())
    }
    return hashlib.sha256(json.dumps(safe, sort_keys=True, default=str).encode()).hexdigest()


def _secret_digest(value: Any) -> str:
    return "sha256:" + hashlib.sha256(str(value).encode()).hexdigest()


def row_values(specs: Mapping[str, Param], values: Mapping[str, Any]) -> dict[str, str]:
    """The values as a person reads them, each secret parameter shown as ``[redacted]``.

    A secret's value is also redacted wherever another value quotes it (a URL built from it),
    so the journal, the results files and the report can show the row as it is.
    """
    secrets = [str(values[n]) for n, p in specs.items() if p.secret and values.get(n)]
    return {
        name: REDACTED if specs.get(name, Param()).secret else redact(_readable(value), secrets)
        for name, value in values.items()
    }


def _readable(value: Any) -> str:
    """``true``/``false`` as a rows file spells them, numbers and text as themselves."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
