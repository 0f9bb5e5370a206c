"""One run request from what a front end was given, checked before any browser starts.

``northstar run`` (``northstar.cli``), ``northstar.run(...)`` (``northstar.api``) and the MCP
server's ``call_program`` (``northstar.mcp``) all build their ``RunRequest`` with
``build_run_request``:

- the rows-vs-repeat rule: rows run one iteration each, so a ``repeat`` other than their
  number is refused (``USAGE_INVALID``), as are no rows at all; constant parameters alone
  run ``repeat`` times (default once);
- ``RepeatOptions``: the count and the interval within their bounds;
- one pass over the rows: each row's values are typed (``northstar.recipe``), checked by
  the front end's own ``check_row`` if it has one, and rendered once with ``bind`` (base
  URL, templates, files), so an error names its row before anything starts.

What only one front end does is passed in, never written here: the CLI's secret prompt
(``complete_params``, asked once the count is known to be valid) and MCP's "files only
from the server's folders" (``check_row``). The CLI reads its params file, and warns
when others may read it, before it calls in. The rows are read once, in order, so a rows
source can later be a stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from northstar.errors import UsageInvalid
from northstar.plan.compiler import CompiledRecipe, bind
from northstar.recipe.inputs import typed_rows
from northstar.recipe.model import Param
from northstar.recipe.params import coerce_params
from northstar.run.execution import RunRequest
from northstar.run.repeat import RepeatOptions

__all__ = ["CompleteParams", "RowCheck", "RunInputs", "build_run_request", "iteration_count"]

# The front end's own check of one row: its number, the values given, the typed values.
RowCheck = Callable[[int, Mapping[str, Any], Mapping[str, Any]], None]
# Values the front end adds to the constant ones (the CLI's secrets): specs, constant, rows.
CompleteParams = Callable[
    [Mapping[str, Param], Mapping[str, Any], Sequence[Mapping[str, Any]] | None],
    Mapping[str, Any],
]


@dataclass(frozen=True)
class RunInputs:
    """What a front end was given for a run's iterations.

    ``params`` apply to every iteration; ``rows`` (if given) are one iteration each, their
    own values winning. ``repeat`` and ``interval`` are checked by ``RepeatOptions``.
    ``repeat_named`` and ``rows_named`` are how a refusal names them to this front end's
    user (``--repeat``, ``of rows.csv``). ``files_dirs``: folders the user named that
    uploads may come from besides the recipe's own (``--files-dir``), resolved.
    """

    params: Mapping[str, Any] = field(default_factory=dict)
    rows: Sequence[Mapping[str, Any]] | None = None
    repeat: object = None
    interval: object = 0
    base_url: str | None = None
    repeat_named: str = "repeat"
    rows_named: str = "given"
    files_dirs: Sequence[str] = ()


def iteration_count(inputs: RunInputs) -> object:
    """How many iterations the inputs ask for (bounds are ``RepeatOptions``' to check)."""
    if inputs.rows is None:
        return 1 if inputs.repeat is None else inputs.repeat
    if not inputs.rows:
        raise UsageInvalid(
            f"no rows {inputs.rows_named}", fix="Pass at least one row, or the parameters alone."
        )
    if inputs.repeat not in (None, len(inputs.rows)):
        raise UsageInvalid(
            f"{inputs.repeat_named} {inputs.repeat} does not match the {len(inputs.rows)} rows "
            f"{inputs.rows_named}",
            fix=f"Leave out {inputs.repeat_named}: rows run one iteration each.",
        )
    return len(inputs.rows)


def build_run_request(
    recipe_path: Path,
    compiled: CompiledRecipe,
    inputs: RunInputs,
    *,
    complete_params: CompleteParams | None = None,
    check_row: RowCheck | None = None,
    **binding: Any,
) -> RunRequest:
    """Everything checked before any browser starts (see the module docstring).

    ``binding``: the rest of the ``RunRequest`` (project, profile, lanes, monitor).
    """
    repeat = RepeatOptions.of(iteration_count(inputs), inputs.interval)
    if inputs.files_dirs:
        compiled = replace(compiled, files_dirs=tuple(inputs.files_dirs))
    specs = compiled.recipe.params
    constant = dict(inputs.params)
    if complete_params is not None:
        constant |= complete_params(specs, constant, inputs.rows)
    rows: list[dict[str, Any]] = []
    for number, given, typed in _typed(specs, constant, inputs.rows, recipe_path.parent):
        if check_row is not None:
            check_row(number, given, typed)
        bind(compiled, typed, base_url=inputs.base_url, iteration=number)
        rows.append(typed)
    return RunRequest(
        recipe_path=recipe_path,
        compiled=compiled,
        rows=rows,
        repeat=repeat,
        base_url=inputs.base_url,
        **binding,
    )


def _typed(
    specs: Mapping[str, Param],
    constant: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]] | None,
    folder: Path,
) -> Iterator[tuple[int, Mapping[str, Any], dict[str, Any]]]:
    """Each row's number, given and typed values; constant parameters alone are one row."""
    if rows is None:
        return iter([(1, constant, coerce_params(specs, constant, recipe_dir=folder))])
    return typed_rows(specs, rows, constant, recipe_dir=folder)
