"""The ``northstar`` command: a thin click front over the async core.

Exit codes (documented in the README):

    0  every iteration verified
    1  an iteration was not verified (failed, unknown outcome)
    2  bad input or usage: nothing was started
    3  needs review (an output could not be saved, an inconclusive reconcile)
    4  the run is blocked (an unknown outcome must be reconciled first)
    130 stopped by Ctrl-C or SIGTERM

Every expected error is printed as one line, ``error[CODE] where: message (fix: ...)``,
never as a traceback.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from northstar.errors import InputError, NorthstarError, OutcomeError, UsageInvalid
from northstar.logs import configure_logging
from northstar.recipe import Recipe
from northstar.results import IterationResult, IterationState, StepResult, StepStatus
from northstar.worker import BrowserSettings, load_compiled, run_once

__all__ = ["EXIT_CODES", "cli", "main"]

EXIT_CODES = {
    "verified": 0,
    "not_verified": 1,
    "bad_input": 2,
    "needs_review": 3,
    "blocked": 4,
    "stopped": 130,
}

_STATE_EXIT = {
    IterationState.VERIFIED: 0,
    IterationState.NEEDS_REVIEW: 3,
    IterationState.STOPPED: 130,
}


def exit_code_for_error(error: NorthstarError) -> int:
    if isinstance(error, InputError):
        return EXIT_CODES["bad_input"]
    if isinstance(error, OutcomeError) and error.code == "RUN_BLOCKED":
        return EXIT_CODES["blocked"]
    return EXIT_CODES["not_verified"]


def format_error(error: NorthstarError) -> str:
    """One line: code, place, message and the fix."""
    return f"error[{error.code}] {error.where()}{error.message} (fix: {error.fix})"


@contextmanager
def expected_errors() -> Iterator[None]:
    """Turn a NorthstarError into its one-line message and exit code."""
    try:
        yield
    except NorthstarError as exc:
        click.echo(format_error(exc), err=True)
        sys.exit(exit_code_for_error(exc))


def parse_param_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """``-p name=value`` options as a mapping; a pair without ``=`` is a usage error."""
    values: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageInvalid(f"-p {pair!r} is not NAME=VALUE", fix="Write -p title=Hello.")
        values[name.strip()] = value
    return values


def read_params_file(path: str) -> dict[str, Any]:
    """A JSON object of parameter values for one iteration."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageInvalid(
            f"cannot read params file {path}: {exc.__class__.__name__}",
            fix="Pass a JSON file holding one object of name: value pairs.",
        ) from None
    if not isinstance(data, dict):
        raise UsageInvalid(f"params file {path} is not a JSON object", fix="Use {\"name\": value}.")
    return data


def step_line(step: StepResult) -> str:
    """A compact line per step for people reading a terminal."""
    mark = {StepStatus.PASSED: "ok  ", StepStatus.FAILED: "FAIL"}.get(step.status, "--  ")
    line = f"  {mark} {step.step_id:<22} {step.tab:<10} {step.kind:<14} {step.duration_ms:>8.0f} ms"
    if step.error:
        line += f"  {step.error['code']}: {step.error['message']}"
    return line


def print_result(result: IterationResult, *, as_json: bool, echo: Callable[[str], None]) -> None:
    if as_json:
        echo(json.dumps(result.to_dict(), indent=2, default=str))
        return
    for step in result.steps:
        echo(step_line(step))
    for name, value in result.outputs.items():
        echo(f"  output {name} = {value}")
    verdict = "verified" if result.verified else f"NOT verified ({result.state})"
    echo(
        f"iteration {result.iteration}: {verdict} in {result.duration_ms / 1000:.2f} s, "
        f"{result.evidence_count} checks"
        + (f"; {result.reason_code} at step {result.failing_step!r}" if result.reason_code else "")
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--log-json", is_flag=True, help="Write logs to stderr as JSON lines.")
@click.option("-v", "--verbose", is_flag=True, help="Log every step (to stderr).")
@click.version_option(package_name="northstar")
def cli(log_json: bool, verbose: bool) -> None:
    """Run stored browser procedures (recipes) and prove each iteration."""
    configure_logging(json=log_json, verbose=verbose)


@cli.command()
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", help="A parameter.")
@click.option("--params-file", type=click.Path(dir_okay=False), help="JSON object of parameters.")
@click.option("--base-url", envvar="NORTHSTAR_BASE_URL", help="Value of {{ base_url }}.")
@click.option("--headed", is_flag=True, help="Show the browser window.")
@click.option("--slow-mo", type=click.IntRange(0, 60_000), default=0, help="Delay per action (ms).")
@click.option("--browser", envvar="NORTHSTAR_BROWSER", help="Chromium executable to launch.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def run(
    recipe: str,
    params: tuple[str, ...],
    params_file: str | None,
    base_url: str | None,
    headed: bool,
    slow_mo: int,
    browser: str | None,
    as_json: bool,
) -> None:
    """Run RECIPE once and verify the iteration."""
    with expected_errors():
        values: dict[str, Any] = read_params_file(params_file) if params_file else {}
        values.update(parse_param_pairs(params))
        settings = BrowserSettings(executable=browser, headless=not headed, slow_mo_ms=slow_mo)
        result = asyncio.run(run_once(recipe, values, base_url=base_url, browser=settings))
        print_result(result, as_json=as_json, echo=click.echo)
        sys.exit(_STATE_EXIT.get(result.state, EXIT_CODES["not_verified"]))


@cli.command()
@click.argument("recipes", nargs=-1, required=True, type=click.Path(dir_okay=False))
def validate(recipes: tuple[str, ...]) -> None:
    """Check recipe files without running them (schema, tab roles, templates)."""
    failed = 0
    for path in recipes:
        try:
            compiled = load_compiled(path)
        except NorthstarError as exc:
            click.echo(format_error(exc), err=True)
            failed += 1
            continue
        recipe = compiled.recipe
        click.echo(f"ok {path}: {recipe.name} v{recipe.version}, {len(recipe.steps)} steps")
    sys.exit(EXIT_CODES["bad_input"] if failed else 0)


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the recipe format (for editors)."""
    click.echo(json.dumps(Recipe.model_json_schema(by_alias=True), indent=2))


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="northstar")

