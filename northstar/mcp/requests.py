"""An agent's call as a validated ``RunRequest``, checked like the CLI's before any browser.

The checks are the CLI's own: parameters through ``coerce_params`` / ``validate_rows``
(``northstar.recipe``), the count and interval through ``RepeatOptions.of``, and every
row rendered once with ``bind`` (base URL, templates, files). Two rules are the server's:
``rows`` and a different ``repeat`` are refused (as the CLI refuses ``--repeat`` with a
rows file), and a file parameter an agent names must lie inside the server's recipe
folders, so a caller cannot have the browser upload any file the server can read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from northstar.composition import load_compiled, run_options
from northstar.errors import ParamInvalid, UsageInvalid
from northstar.journal import Journal
from northstar.mcp.catalogue import Program
from northstar.plan.compiler import bind
from northstar.recipe.inputs import validate_rows
from northstar.recipe.model import Param
from northstar.recipe.params import coerce_params
from northstar.run.execution import RunRequest
from northstar.run.repeat import RepeatOptions

__all__ = ["ProgramInputs", "check_files_inside", "program_request", "recorded_request"]


@dataclass(frozen=True)
class ProgramInputs:
    """What a caller passed: constant ``params``, or one row per iteration, and the bounds."""

    params: Mapping[str, Any] | None = None
    rows: Sequence[Mapping[str, Any]] | None = None
    repeat: int | None = None
    interval: int = 0
    base_url: str | None = None


def _typed_rows(program: Program, inputs: ProgramInputs) -> tuple[list[dict[str, Any]], object]:
    """Every row's typed values and the iteration count they imply."""
    specs = program.compiled.recipe.params
    constant = dict(inputs.params or {})
    folder = program.path.parent
    if inputs.rows is None:
        count = 1 if inputs.repeat is None else inputs.repeat
        return [coerce_params(specs, constant, recipe_dir=folder)], count
    if not inputs.rows:
        raise UsageInvalid("rows is empty", fix="Pass at least one row, or params alone.")
    if inputs.repeat not in (None, len(inputs.rows)):
        raise UsageInvalid(
            f"repeat {inputs.repeat} does not match the {len(inputs.rows)} rows given",
            fix="Leave out repeat: rows run one iteration each.",
        )
    return validate_rows(specs, inputs.rows, constant, recipe_dir=folder), len(inputs.rows)


def _given_files(specs: Mapping[str, Param], inputs: ProgramInputs) -> set[str]:
    """The file parameters the caller named (a recipe's own defaults are trusted)."""
    given = [inputs.params or {}, *(inputs.rows or [])]
    return {
        name
        for name, spec in specs.items()
        if spec.type == "file" and any(name in r for r in given)
    }


def check_files_inside(
    rows: Sequence[Mapping[str, Any]], names: set[str], folders: Sequence[Path]
) -> None:
    """A file a caller named must be inside one of ``folders``: ``PARAM_INVALID`` otherwise."""
    roots = [folder.resolve() for folder in folders]
    for number, row in enumerate(rows, start=1):
        for name in sorted(n for n in names if row.get(n) is not None):
            path = Path(str(row[name])).resolve()
            if not any(path.is_relative_to(root) for root in roots):
                raise ParamInvalid(
                    f"row {number}: parameter {name!r}: a file given over MCP must be inside "
                    "the server's recipe folders",
                    fix="Put the file in a --recipes folder and pass its path.",
                )


def program_request(
    program: Program, inputs: ProgramInputs, *, folders: Sequence[Path], **binding: Any
) -> RunRequest:
    """Everything checked before any browser starts: parameters, rows, bounds, rendering.

    ``binding``: the rest of the ``RunRequest`` (project; a recorded run's lanes and profile).
    """
    rows, count = _typed_rows(program, inputs)
    repeat = RepeatOptions.of(count, inputs.interval)
    check_files_inside(rows, _given_files(program.compiled.recipe.params, inputs), folders)
    for number in range(1, len(rows) + 1):
        bind(program.compiled, rows[number - 1], base_url=inputs.base_url, iteration=number)
    return RunRequest(
        recipe_path=program.path,
        compiled=program.compiled,
        rows=rows,
        repeat=repeat,
        base_url=inputs.base_url,
        **binding,
    )


def recorded_request(
    journal: Journal, run_id: str, inputs: ProgramInputs, *, folders: Sequence[Path]
) -> RunRequest:
    """The request of a recorded run, with the caller's inputs given again (the journal
    keeps only their fingerprints); the run's count, interval, lanes and profile as recorded.
    """
    recorded = run_options(journal, run_id, {"base_url": inputs.base_url})
    path = Path(recorded["recipe"])
    again = replace(
        inputs,
        repeat=recorded["repeat"] if inputs.rows is None else None,
        interval=recorded["interval"],
        base_url=recorded["base_url"],
    )
    return program_request(
        Program(path, load_compiled(path)),
        again,
        folders=folders,
        project=recorded["project"],
        profile=recorded["profile"],
        concurrency=recorded["concurrency"],
        fail_fast=recorded["fail_fast"],
        keep_context=recorded["keep_context"],
    )
