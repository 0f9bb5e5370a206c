"""Secret parameters without the shell history: from the environment, or asked for.

A value given with ``-p`` or in a params file wins. A secret still missing is taken from
``NORTHSTAR_SECRET_<NAME>`` (as regression cases do), else asked for without echo when a
person is at a terminal. A params file that holds a secret and that the group or others
can read gets a warning line: it works, but the secret is not private.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from northstar.cases.manifest import secret_env_var
from northstar.errors import ParamMissing
from northstar.recipe.model import Param

__all__ = ["exposed_params_file", "missing_secrets"]


def _given(value: Any) -> bool:
    return value is not None and value != ""


def missing_secrets(
    specs: Mapping[str, Param],
    constant: Mapping[str, Any],
    rows: Iterable[Mapping[str, Any]] | None,
    *,
    environ: Mapping[str, str],
    ask: Callable[[str], str] | None,
) -> dict[str, str]:
    """Values for the secrets neither ``-p`` nor the params file gave (every row included).

    ``ask`` is ``None`` without a terminal. A required secret still missing is
    ``PARAM_MISSING`` naming the variable (a rows file leaves it to the per-row check).
    """
    found: dict[str, str] = {}
    for name, spec in specs.items():
        if not spec.secret or _given(constant.get(name)):
            continue  # rows are read only for a secret -p did not give
        if rows is not None and all(_given(row.get(name)) for row in rows):
            continue
        value = environ.get(secret_env_var(name), "")
        if not value and ask is not None:
            value = ask(name)
        if value:
            found[name] = value
        elif spec.required and rows is None:
            raise ParamMissing(
                f"secret parameter {name!r} is required",
                fix=f"Set {secret_env_var(name)}, or run at a terminal to be asked for it.",
            )
    return found


def exposed_params_file(
    path: str | Path, specs: Mapping[str, Param], values: Iterable[Mapping[str, Any]]
) -> str | None:
    """A warning when the file holds a secret and its group or others may read it.

    The mode is looked at first: a private file's rows are not read for this.
    """
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if not mode & (stat.S_IRGRP | stat.S_IROTH) or not any(s.secret for s in specs.values()):
        return None
    secrets: set[str] = set()
    for value in values:
        secrets |= {n for n, s in specs.items() if s.secret and _given(value.get(n))}
    if not secrets:
        return None
    return (
        f"warning: {path} holds secret parameter {', '.join(sorted(secrets))} and is readable by "
        f"group or others (mode {mode:04o}); run `chmod 600 {path}`"
    )
