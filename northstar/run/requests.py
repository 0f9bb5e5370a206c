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
  URL, templates, files), so an error names its row before anything starts. The rendered
  plan is dropped: each iteration renders its own when it starts.
- a params file (``RowsFile``) is that pass as a stream: a bad row is refused, naming its
  line, before the rest is read; its rows are counted, not kept, so the rows-vs-repeat
  rule is checked after the pass; the request holds ``LazyRows``, which reads row N
  again when the run asks for it. No batch is ever held whole in memory. Every row is
  typed, but only row 1 is rendered (rendering is most of the pass's time): the others
  differ only in values already typed, and each iteration renders its own plan before it
  acts, so a row that cannot render (a URL built from it) stops the run at that row with
  nothing of it done. A recipe that selects files renders every row first (a row's file
  outside the upload folders is refused before anything starts).

What only one front end does is passed in, never written here: the CLI's secret prompt
(``complete_params``, asked once the count is known to be valid) and MCP's "files only
from the server's folders" (``check_row``). The CLI reads its params file, and warns
when others may read it, before it calls in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from northstar.errors import InputError, UsageInvalid
from northstar.plan.compiler import CompiledRecipe, bind
from northstar.recipe.inputs import typed_row, typed_rows
from northstar.recipe.model import Param
from northstar.recipe.params import coerce_params
from northstar.recipe.rows_file import LazyRows, RowsFile, at_line
from northstar.run.execution import RowsDigest, RunRequest
from northstar.run.repeat import MAX_COUNT, RepeatOptions

__all__ = [
    "CompleteParams",
    "RowCheck",
    "Rows",
    "RunInputs",
    "build_run_request",
    "iteration_count",
]

# Rows given in memory (an API call, MCP), or a params file read a row at a time.
Rows = Sequence[Mapping[str, Any]] | RowsFile

# The front end's own check of one row: its number, the values given, the typed values.
RowCheck = Callable[[int, Mapping[str, Any], Mapping[str, Any]], None]
# Values the front end adds to the constant ones (the CLI's secrets): specs, constant, rows.
CompleteParams = Callable[
    [Mapping[str, Param], Mapping[str, Any], Iterable[Mapping[str, Any]] | None],
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
    rows: Rows | None = None
    repeat: object = None
    interval: object = 0
    base_url: str | None = None
    repeat_named: str = "repeat"
    rows_named: str = "given"
    files_dirs: Sequence[str] = ()


def iteration_count(inputs: RunInputs, counted: int | None = None) -> object:
    """How many iterations the inputs ask for (bounds are ``RepeatOptions``' to check).

    ``counted``: the number of rows a pass over a ``RowsFile`` found (it has no length
    before that pass).
    """
    if inputs.rows is None:
        return 1 if inputs.repeat is None else inputs.repeat
    count = counted if counted is not None else len(_listed(inputs.rows))
    if not count:
        raise UsageInvalid(
            f"no rows {inputs.rows_named}", fix="Pass at least one row, or the parameters alone."
        )
    if inputs.repeat not in (None, count):
        raise UsageInvalid(
            f"{inputs.repeat_named} {inputs.repeat} does not match the {count} rows "
            f"{inputs.rows_named}",
            fix=f"Leave out {inputs.repeat_named}: rows run one iteration each.",
        )
    return count


def _listed(rows: Rows) -> Sequence[Mapping[str, Any]]:
    if isinstance(rows, RowsFile):
        raise TypeError("a RowsFile is counted by a pass over it")
    return rows


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
    streamed = isinstance(inputs.rows, RowsFile)
    if not streamed:  # a list's count is known: refused before a secret is asked for
        RepeatOptions.of(iteration_count(inputs), inputs.interval)
    if inputs.files_dirs:
        compiled = replace(compiled, files_dirs=tuple(inputs.files_dirs))
    specs = compiled.recipe.params
    constant = dict(inputs.params)
    if complete_params is not None:
        constant |= complete_params(specs, constant, inputs.rows)
    folder = recipe_path.parent
    kept: list[dict[str, Any]] = []
    counted = 0
    selects_files = _selects_files(compiled)
    digest = RowsDigest(specs)
    for number, given, typed in _typed(specs, constant, inputs.rows, folder):
        if number > MAX_COUNT:  # refused at the first row too many, not after reading them all
            RepeatOptions.of(number)
        if check_row is not None:
            check_row(number, given, typed)
        if number == 1 or not streamed or selects_files:  # renders, or says why; dropped
            bind(compiled, typed, base_url=inputs.base_url, iteration=number)
        counted = number
        digest.add(typed)
        if not streamed:
            kept.append(typed)
    repeat = RepeatOptions.of(iteration_count(inputs, counted), inputs.interval)
    rows: Sequence[Mapping[str, Any]] = kept
    if isinstance(inputs.rows, RowsFile):
        rows = LazyRows(inputs.rows, counted, _typer(specs, constant, folder), digest.hexdigest())
    return RunRequest(
        recipe_path=recipe_path,
        compiled=compiled,
        rows=rows,
        repeat=repeat,
        base_url=inputs.base_url,
        **binding,
    )


def _selects_files(compiled: CompiledRecipe) -> bool:
    """Whether a row may name a file: its path is checked against the upload folders by
    rendering, so such a batch renders every row before it starts."""
    recipe = compiled.recipe
    return any(p.type == "file" for p in recipe.params.values()) or any(
        s.upload for s in recipe.steps
    )


def _typer(
    specs: Mapping[str, Param], constant: Mapping[str, Any], folder: Path
) -> Callable[[int, Mapping[str, Any]], Mapping[str, Any]]:
    """How a row read again during the run is typed: as its check typed it."""
    return lambda number, row: typed_row(specs, number, row, constant, recipe_dir=folder)[1]


def _typed(
    specs: Mapping[str, Param],
    constant: Mapping[str, Any],
    rows: Rows | None,
    folder: Path,
) -> Iterator[tuple[int, Mapping[str, Any], dict[str, Any]]]:
    """Each row's number, given and typed values; constant parameters alone are one row.

    A ``RowsFile``'s refusal of a row's values names the line the row starts on.
    """
    if rows is None:
        yield 1, constant, coerce_params(specs, constant, recipe_dir=folder)
        return
    if not isinstance(rows, RowsFile):
        yield from typed_rows(specs, rows, constant, recipe_dir=folder)
        return
    for number, (line, row) in enumerate(rows.numbered(), start=1):
        try:
            given, typed = typed_row(specs, number, row, constant, recipe_dir=folder)
        except InputError as exc:
            raise at_line(exc, rows.path, line) from None
        yield number, given, typed
