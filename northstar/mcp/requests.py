"""An agent's call as a validated ``RunRequest``, checked like the CLI's before any browser.

The request is built by the one request builder (``northstar.run.requests``): the
rows-vs-repeat rule, the bounds and one pass that types, checks and renders each row.
One rule is the server's, passed in as the builder's row check: a file parameter an agent
names must lie inside the server's recipe folders, so a caller cannot have the browser
upload any file the server can read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from northstar.composition import load_compiled, run_options
from northstar.errors import ParamInvalid
from northstar.journal import Journal
from northstar.mcp.catalogue import Program
from northstar.recipe.model import Param
from northstar.run.execution import RunRequest
from northstar.run.requests import RowCheck, RunInputs, build_run_request

__all__ = ["ProgramInputs", "program_request", "recorded_request"]


@dataclass(frozen=True)
class ProgramInputs:
    """What a caller passed: constant ``params``, or one row per iteration, and the bounds."""

    params: Mapping[str, Any] | None = None
    rows: Sequence[Mapping[str, Any]] | None = None
    repeat: int | None = None
    interval: int = 0
    base_url: str | None = None


def _files_inside(
    number: int, typed: Mapping[str, Any], names: Iterable[str], roots: Sequence[Path]
) -> None:
    for name in sorted(n for n in names if typed.get(n) is not None):
        path = Path(str(typed[name])).resolve()
        if not any(path.is_relative_to(root) for root in roots):
            raise ParamInvalid(
                f"row {number}: parameter {name!r}: a file given over MCP must be inside "
                "the server's recipe folders",
                fix="Put the file in a --recipes folder and pass its path.",
            )


def _files_from_folders(specs: Mapping[str, Param], folders: Sequence[Path]) -> RowCheck:
    """The builder's row check: the file parameters a caller gave, inside ``folders``."""
    files = {name for name, spec in specs.items() if spec.type == "file"}
    roots = [folder.resolve() for folder in folders]

    def check(number: int, given: Mapping[str, Any], typed: Mapping[str, Any]) -> None:
        # A recipe's own defaults are trusted; only what the caller named is checked.
        _files_inside(number, typed, files & set(given), roots)

    return check


def program_request(
    program: Program, inputs: ProgramInputs, *, folders: Sequence[Path], **binding: Any
) -> RunRequest:
    """Everything checked before any browser starts: parameters, rows, bounds, rendering.

    ``binding``: the rest of the ``RunRequest`` (project; a recorded run's lanes and profile).
    """
    run_inputs = RunInputs(
        params=dict(inputs.params or {}),
        rows=inputs.rows,
        repeat=inputs.repeat,
        interval=inputs.interval,
        base_url=inputs.base_url,
    )
    specs = program.compiled.recipe.params
    return build_run_request(
        program.path,
        program.compiled,
        run_inputs,
        check_row=_files_from_folders(specs, folders),
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
