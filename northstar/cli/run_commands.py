"""``northstar run``, ``validate`` and ``schema``: the commands that start or check recipes."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any

import click

from northstar._early_start import run_on_loop
from northstar._stop_requests import catch_stop_signals, on_stop_request
from northstar.browser_settings import BrowserSettings
from northstar.cli._debug_options import debug_options, debug_settings, replay_inputs
from northstar.cli._inputs import browser_options, build_request, input_options
from northstar.cli._options import journal_option
from northstar.cli._output import (
    EXIT_CODES,
    exit_code_for_status,
    expected_errors,
    format_error,
    report_outcome,
)
from northstar.cli.progress import Progress
from northstar.composition import load_compiled, run_recipe
from northstar.errors import NorthstarError
from northstar.recipe.model import Recipe
from northstar.results import IterationResult
from northstar.run.execution import RunOutcome, StopSignal

__all__ = ["browser_settings", "run", "run_with_signals", "schema", "validate"]


def browser_settings(options: dict[str, Any]) -> BrowserSettings:
    debug = debug_settings(options)  # a pause waits for a person: it needs a window
    return BrowserSettings(
        executable=options.get("browser"),
        headless=not (options.get("headed") or debug.pauses),
        slow_mo_ms=options.get("slow_mo") or 0,
        storage_state=options.get("profile"),
        debug=debug,
        replay_har=options.get("replay_har"),
    )


async def run_with_signals(
    start: Callable[[StopSignal, Callable[[IterationResult], None]], Awaitable[RunOutcome]],
    *,
    total: int,
    as_json: bool,
) -> RunOutcome:
    """Ctrl-C and SIGTERM ask the run to stop after the current step; progress on stderr.

    A request made before the run started (during start-up) stops it before its first
    iteration. The signal handler only schedules the request on this loop.
    """
    stop = StopSignal()
    loop = asyncio.get_running_loop()

    def hand_on() -> None:
        with suppress(RuntimeError):  # the loop is closed: the run is over already
            loop.call_soon_threadsafe(stop.request)

    progress = Progress(total, sys.stderr, live=sys.stderr.isatty()) if total > 1 else None
    if as_json:
        progress = None
    try:
        with catch_stop_signals(), on_stop_request(hand_on):
            return await start(stop, progress.update if progress else (lambda result: None))
    finally:
        if progress is not None:
            progress.close()


@click.command()
# Plain paths: the recipe reader refuses a directory, FIFO or device with a coded line.
@click.argument("recipe", type=click.Path())
@input_options
@click.option("--repeat", type=int, default=None, help="Iterations to run (1-100000).")
@click.option("--interval", type=int, default=0, help="Seconds between iterations (0-86400).")
@click.option(
    "--concurrency",
    type=click.IntRange(1, 32),
    default=1,
    show_default=True,
    help="Lanes sharing one browser, each with its own context and verified sequence.",
)
@click.option("--fail-fast", is_flag=True, help="A lane that stops stops the other lanes too.")
@click.option(
    "--monitor",
    is_flag=True,
    help="Watch for loops (repeated actions, stagnant pages); signals are advice in the journal.",
)
@click.option(
    "--keep-context",
    is_flag=True,
    help="Keep one browser context per lane across iterations (a signed-in session).",
)
@journal_option
@click.option("--queue", default=None, help="Enqueue the iterations for `northstar worker`s.")
@click.option("--detach", is_flag=True, help="With --queue: print the run id and return.")
@click.option("--project", default="default", show_default=True, help="Project the run binds.")
@browser_options
@debug_options
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary at the end.")
def run(**options: Any) -> None:
    """Run RECIPE (once, N times, or once per row) and verify every iteration."""
    with expected_errors(), replay_inputs(options) as options:
        request = build_request(options)
        if options.get("queue"):  # many workers: the distributed front end takes it from here
            from northstar.cli.distributed_commands import run_queued

            run_queued(request, options)
            return
        settings = browser_settings(options)

        def start(stop: StopSignal, on_result: Callable[[IterationResult], None]) -> Any:
            return run_recipe(
                request,
                browser=settings,
                journal_path=options["journal"],
                stop=stop,
                on_result=on_result,
                on_start=lambda run_id: click.echo(f"run {run_id}", err=True),
            )

        outcome = run_on_loop(
            run_with_signals(start, total=request.repeat.count, as_json=options["as_json"])
        )
        report_outcome(outcome, as_json=options["as_json"], echo=click.echo)
        sys.exit(exit_code_for_status(outcome.status))


@click.command()
@click.argument("recipes", nargs=-1, required=True, type=click.Path())
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


@click.command()
def schema() -> None:
    """Print the JSON Schema of the recipe format (for editors)."""
    click.echo(json.dumps(Recipe.model_json_schema(by_alias=True), indent=2))
