"""Turning command-line options into a validated ``RunRequest`` before any browser starts."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from northstar.cli._options import configured_option, remote_browser_options
from northstar.cli._secrets import exposed_params_file, missing_secrets
from northstar.composition import load_compiled
from northstar.errors import UsageInvalid
from northstar.plan.compiler import CompiledRecipe, with_default_timeout
from northstar.recipe.inputs import (
    Columns,
    RowsFile,
    column_selector,
    read_params_source,
    select_columns,
)
from northstar.recipe.model import Param
from northstar.run.execution import RunRequest
from northstar.run.requests import RunInputs, build_run_request

__all__ = [
    "browser_options",
    "build_request",
    "files_dir_option",
    "files_dirs",
    "input_options",
    "parse_param_pairs",
]

F = TypeVar("F", bound=Callable[..., Any])


def input_options(command: F) -> F:
    """``-p``, ``--params-file`` (and what its columns are), ``--base-url`` and
    ``--timeout``: the inputs of a run's iterations."""
    for option in reversed(
        [
            click.option(
                "-p",
                "--param",
                "params",
                multiple=True,
                metavar="NAME=VALUE",
                help="A parameter (repeatable).",
            ),
            click.option(
                "--params-file",
                type=click.Path(),  # the reader refuses a directory, FIFO or device, coded
                help="A .json object (constant), or .csv / .jsonl / .json list (one row each).",
            ),
            configured_option("--base-url", setting="base_url"),
            configured_option("--timeout", setting="timeout", metavar="MS"),
            click.option(
                "--column",
                "columns",
                multiple=True,
                metavar="PARAM=COLUMN",
                help="The params file's COLUMN holds parameter PARAM (repeatable).",
            ),
            click.option(
                "--ignore-column",
                "ignore_columns",
                multiple=True,
                metavar="NAME",
                help="Leave the params file's column NAME out (repeatable).",
            ),
            click.option(
                "--ignore-extra-columns",
                is_flag=True,
                help="Leave out every column of the params file that is not a parameter.",
            ),
            files_dir_option,
        ]
    ):
        command = option(command)
    return command


files_dir_option = click.option(
    "--files-dir",
    "files_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="A folder uploads may come from besides the recipe's own (repeatable).",
)


def files_dirs(given: Sequence[str] | None) -> tuple[str, ...]:
    """The ``--files-dir`` folders, resolved; one that is not a folder is a usage error."""
    folders = []
    for folder in given or ():
        if not Path(folder).is_dir():
            raise UsageInvalid(
                f"--files-dir {folder}: no such folder",
                fix="Pass a folder that holds the files to upload.",
            )
        folders.append(str(Path(folder).resolve()))
    return tuple(folders)


def browser_options(command: F) -> F:
    """How the browser is launched (``--headed``, ``--slow-mo``, ``--browser``, ``--profile``)
    or connected to (``--cdp-url``, ``--ws-endpoint``)."""
    for option in reversed(
        [
            click.option("--headed", is_flag=True, help="Show the browser window."),
            click.option(
                "--slow-mo",
                type=click.IntRange(0, 60_000),
                default=0,
                help="Delay per action (ms).",
            ),
            configured_option("--browser", setting="browser"),
            click.option(
                "--profile",
                type=click.Path(dir_okay=False),
                help="Storage state (cookies, local storage) each iteration starts from.",
            ),
            click.option(
                "--state",
                type=click.Path(exists=True, dir_okay=False),
                help="A signed-in state saved by `northstar sign-in`: every context starts "
                "from it (the recipe's `setup` signs in again if it no longer holds).",
            ),
            *remote_browser_options,
        ]
    ):
        command = option(command)
    return command


def parse_param_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """``-p name=value`` options as a mapping; a pair without ``=`` is a usage error."""
    values: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageInvalid(f"-p {pair!r} is not NAME=VALUE", fix="Write -p title=Hello.")
        values[name.strip()] = value
    return values


def _asker() -> Callable[[str], str] | None:
    """Ask for a secret without echo, only when a person is at a terminal."""
    if not sys.stdin.isatty():
        return None
    return lambda name: str(click.prompt(f"{name} (secret)", hide_input=True, err=True))


def _warn_exposed(
    path: str, specs: Mapping[str, Param], values: Iterable[Mapping[str, Any]]
) -> None:
    warning = exposed_params_file(path, specs, values)
    if warning is not None:
        click.echo(warning, err=True)


def _secrets_from_environ_or_prompt(
    specs: Mapping[str, Param],
    constant: Mapping[str, Any],
    rows: Iterable[Mapping[str, Any]] | None,
) -> dict[str, str]:
    """The CLI's own inputs: secrets from ``NORTHSTAR_SECRET_*``, else asked at a terminal."""
    return missing_secrets(specs, constant, rows, environ=os.environ, ask=_asker())


def build_request(
    options: Mapping[str, Any], *, load: Callable[[Path], CompiledRecipe] = load_compiled
) -> RunRequest:
    """Everything checked before any browser starts: recipe, every row, the options.

    ``load`` reads the file (a program's declaration is loaded by ``northstar.programs``);
    the rest is the one request builder's (``northstar.run.requests``).
    """
    recipe = Path(options["recipe"])
    compiled = with_default_timeout(load(recipe), options.get("timeout"))
    params_file = options.get("params_file")
    source = None
    if params_file:
        source = read_params_source(params_file)
        if source.rows is not None:
            columns = Columns.from_options(
                options.get("columns", ()),
                options.get("ignore_columns", ()),
                bool(options.get("ignore_extra_columns")),
            )
            source.rows = _selected(source.rows, compiled.recipe.params, columns, params_file)
        values = itertools.chain([source.constant], source.rows or [])
        _warn_exposed(params_file, compiled.recipe.params, values)
    inputs = RunInputs(
        params={**(source.constant if source else {}), **parse_param_pairs(options["params"])},
        rows=source.rows if source else None,
        repeat=options.get("repeat"),
        interval=options.get("interval", 0),
        base_url=options.get("base_url"),
        repeat_named="--repeat",
        rows_named=f"of {params_file}",
        files_dirs=files_dirs(options.get("files_dirs")),
    )
    profile = options.get("profile")
    return build_run_request(
        recipe,
        compiled,
        inputs,
        complete_params=_secrets_from_environ_or_prompt,
        project=options.get("project") or "default",
        profile=str(Path(profile).resolve()) if profile else None,
        concurrency=options.get("concurrency") or 1,
        fail_fast=bool(options.get("fail_fast")),
        on_failure=options.get("on_failure") or "stop",
        keep_context=bool(options.get("keep_context")),
        monitor=bool(options.get("monitor")),
        probe_control_every=options.get("probe_control_every") or 0,
        state=_resolved(options.get("state")),
        keep_state=_resolved(options.get("keep_state")),
    )


def _selected(
    rows: list[dict[str, Any]] | RowsFile, specs: Mapping[str, Param], columns: Columns, file: str
) -> list[dict[str, Any]] | RowsFile:
    """The rows as parameters; a streamed file's rows are mapped as each is read."""
    if isinstance(rows, RowsFile):
        return rows.with_each(column_selector(specs, columns, file))
    return select_columns(rows, specs, columns, file)


def _resolved(path: str | None) -> str | None:
    return str(Path(path).resolve()) if path else None
