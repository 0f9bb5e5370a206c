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
import signal
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from northstar import readers
from northstar.compiler import bind
from northstar.errors import InputError, NorthstarError, OutcomeError, UsageInvalid
from northstar.execution import RunOutcome, RunRequest, StopSignal
from northstar.inputs import read_params_source, validate_rows
from northstar.journal import resolve_journal_path
from northstar.logs import configure_logging
from northstar.params import coerce_params
from northstar.progress import Progress
from northstar.recipe import Recipe
from northstar.repeat import RepeatOptions
from northstar.results import IterationResult, IterationState, StepResult, StepStatus
from northstar.worker import BrowserSettings, load_compiled, run_recipe

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


_journal_option = click.option(
    "--journal", envvar="NORTHSTAR_JOURNAL", help="Journal file (.northstar/journal.db)."
)


@cli.command()
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", help="A parameter.")
@click.option(
    "--params-file",
    type=click.Path(dir_okay=False),
    help="Parameters: .json object (constant), or .csv / .jsonl / .json list (one row each).",
)
@click.option("--repeat", type=int, default=None, help="Iterations to run (1-100000).")
@click.option("--interval", type=int, default=0, help="Seconds between iterations (0-86400).")
@click.option("--base-url", envvar="NORTHSTAR_BASE_URL", help="Value of {{ base_url }}.")
@_journal_option
@click.option("--project", default="default", show_default=True, help="Project the run binds.")
@click.option("--headed", is_flag=True, help="Show the browser window.")
@click.option("--slow-mo", type=click.IntRange(0, 60_000), default=0, help="Delay per action (ms).")
@click.option("--browser", envvar="NORTHSTAR_BROWSER", help="Chromium executable to launch.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary at the end.")
def run(**options: Any) -> None:
    """Run RECIPE (once, N times, or once per row) and verify every iteration."""
    with expected_errors():
        request = build_request(options)
        settings = BrowserSettings(
            executable=options["browser"],
            headless=not options["headed"],
            slow_mo_ms=options["slow_mo"],
        )
        outcome = asyncio.run(
            _run_with_signals(request, settings, options["journal"], as_json=options["as_json"])
        )
        report_outcome(outcome, as_json=options["as_json"], echo=click.echo)
        sys.exit(exit_code_for_outcome(outcome))


def build_request(options: Mapping[str, Any]) -> RunRequest:
    """Everything checked before any browser starts: recipe, every row, the options."""
    recipe = Path(options["recipe"])
    compiled = load_compiled(recipe)
    source = read_params_source(options["params_file"]) if options["params_file"] else None
    constant = {**(source.constant if source else {}), **parse_param_pairs(options["params"])}
    specs = compiled.recipe.params
    if source is not None and source.rows is not None:
        if options["repeat"] not in (None, len(source.rows)):
            raise UsageInvalid(
                f"--repeat {options['repeat']} does not match the {len(source.rows)} rows "
                f"of {options['params_file']}",
                fix="Drop --repeat: a rows file runs one iteration per row.",
            )
        rows = validate_rows(specs, source.rows, constant, recipe_dir=recipe.parent)
        count: object = len(rows)
    else:
        rows = [coerce_params(specs, constant, recipe_dir=recipe.parent)]
        count = 1 if options["repeat"] is None else options["repeat"]
    repeat = RepeatOptions.of(count, options["interval"])
    for number, row in enumerate(rows, start=1):  # renders every row: base URL, files, templates
        bind(compiled, row, base_url=options["base_url"], iteration=number)
    return RunRequest(
        recipe_path=recipe,
        compiled=compiled,
        rows=rows,
        repeat=repeat,
        base_url=options["base_url"],
        project=options["project"],
    )


async def _run_with_signals(
    request: RunRequest, settings: BrowserSettings, journal: str | None, *, as_json: bool
) -> RunOutcome:
    """Ctrl-C and SIGTERM ask the run to stop after the current step."""
    stop = StopSignal()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.request)
    progress = None
    if request.repeat.count > 1 and not as_json:
        progress = Progress(request.repeat.count, sys.stderr, live=sys.stderr.isatty())
    try:
        return await run_recipe(
            request,
            browser=settings,
            journal_path=journal,
            stop=stop,
            on_result=progress.update if progress else (lambda result: None),
            on_start=lambda run_id: click.echo(f"run {run_id}", err=True),
        )
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        if progress is not None:
            progress.close()


def exit_code_for_outcome(outcome: RunOutcome) -> int:
    return {
        "verified": EXIT_CODES["verified"],
        "needs_review": EXIT_CODES["needs_review"],
        "blocked": EXIT_CODES["blocked"],
        "stopped": EXIT_CODES["stopped"],
    }.get(outcome.status, EXIT_CODES["not_verified"])


def outcome_to_dict(outcome: RunOutcome) -> dict[str, Any]:
    summary = outcome.summary
    return {
        "run_id": outcome.run_id,
        "status": outcome.status,
        "requested": outcome.summary.requested,
        "verified": len(summary.verified),
        "evidence_count": summary.evidence_count,
        "model_calls": summary.model_calls,
        "outputs": [{"iteration": i, "name": k, "value": v} for i, k, v in summary.outputs],
        "iterations": [result.to_dict() for result in outcome.results],
        "error": outcome.error.to_dict() if outcome.error else None,
        "artifacts": str(outcome.artifacts) if outcome.artifacts else None,
    }


def report_outcome(outcome: RunOutcome, *, as_json: bool, echo: Callable[[str], None]) -> None:
    if as_json:
        echo(json.dumps(outcome_to_dict(outcome), indent=2, default=str))
        return
    if len(outcome.results) == 1:
        print_result(outcome.results[0], as_json=False, echo=echo)
    if outcome.error is not None and len(outcome.results) != 1:
        echo(format_error(outcome.error))
    echo(
        f"run {outcome.run_id}: {outcome.status}, {len(outcome.summary.verified)} of "
        f"{outcome.summary.requested} iterations verified"
    )


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


@cli.command()
@_journal_option
@click.option("--limit", type=int, default=20, show_default=True, help="How many runs.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def runs(journal: str | None, limit: int, as_json: bool) -> None:
    """List recent runs, newest first."""
    with expected_errors():
        found = readers.list_runs(resolve_journal_path(journal), limit)
        if as_json:
            click.echo(json.dumps([r.to_dict() for r in found], indent=2, default=str))
        else:
            click.echo(readers.render_runs(found))


@cli.command()
@click.argument("run_id")
@_journal_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show(run_id: str, journal: str | None, as_json: bool) -> None:
    """Show a run: iterations, steps, evidence, outputs and reasons."""
    with expected_errors():
        detail = readers.get_run(resolve_journal_path(journal), run_id)
        if as_json:
            click.echo(json.dumps(detail.to_dict(), indent=2, default=str))
        else:
            click.echo(readers.render_run(detail))


@cli.command()
@click.argument("run_id")
@_journal_option
@click.option("--every", type=click.FloatRange(0.05, 60), default=0.5, help="Seconds per poll.")
def watch(run_id: str, journal: str | None, every: float) -> None:
    """Follow a live run (started by another process) until it ends."""
    with expected_errors():
        detail = asyncio.run(
            readers.follow_run(
                resolve_journal_path(journal),
                run_id,
                poll=lambda: asyncio.sleep(every),
                on_change=lambda d: click.echo(readers.render_run(d) + "\n"),
            )
        )
        sys.exit(0 if detail.summary.effective_status == "verified" else 1)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="northstar")
