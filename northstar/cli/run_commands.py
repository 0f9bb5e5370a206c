"""``northstar run`` and ``validate``: the commands that start or check recipes."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any

import click

from northstar._early_start import run_on_loop
from northstar._stop_requests import catch_stop_signals, on_stop_request
from northstar.browser.settings import BrowserSettings
from northstar.cli._debug_options import debug_options, debug_settings, replay_inputs
from northstar.cli._inputs import browser_options, build_request, input_options
from northstar.cli._options import journal_option
from northstar.cli._output import EXIT_CODES, expected_errors, notice, report_ending, report_error
from northstar.cli.lint_commands import print_warnings
from northstar.cli.progress import Progress, ProgressHooks
from northstar.composition import load_compiled, run_recipe
from northstar.errors import NorthstarError, UsageInvalid
from northstar.journal.paths import resolve_journal
from northstar.logs import json_logging
from northstar.programs import is_program, program_compiled, run_program
from northstar.programs.running import refuse_unsupported
from northstar.programs.verdict import model_calls_line
from northstar.results import IterationResult
from northstar.run.execution import RunOutcome, StopSignal
from northstar.run.repeat import ON_FAILURE

__all__ = ["browser_settings", "run", "run_with_signals", "validate"]


def browser_settings(options: dict[str, Any]) -> BrowserSettings:
    debug = debug_settings(options)  # a pause waits for a person: it needs a window
    return BrowserSettings(
        executable=options.get("browser"),
        headless=not (options.get("headed") or debug.pauses),
        slow_mo_ms=options.get("slow_mo") or 0,
        storage_state=options.get("profile"),
        debug=debug,
        replay_har=options.get("replay_har"),
        cdp_url=options.get("cdp_url"),
        ws_endpoint=options.get("ws_endpoint"),
    )


def make_progress(total: int, *, as_json: bool) -> Progress | None:
    """A progress display on stderr for a multi-iteration run in text mode; else none."""
    if total <= 1 or as_json or json_logging():  # stdout's JSON, or stderr's JSON lines
        return None
    return Progress(total, sys.stderr, live=sys.stderr.isatty())


async def run_with_signals(
    start: Callable[[StopSignal, Callable[[IterationResult], None]], Awaitable[RunOutcome]],
    *,
    total: int,
    as_json: bool,
    progress: Progress | None = None,
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

    progress = progress or make_progress(total, as_json=as_json)
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
    "--on-failure",
    type=click.Choice(ON_FAILURE),
    default="stop",
    show_default=True,
    help="continue: go past rows that failed with nothing sent (NOT_SENT); the ending lists them.",
)
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
        program = is_program(options["recipe"])
        if program:
            refuse_unsupported(options)
        request = (
            build_request(options, load=program_compiled) if program else build_request(options)
        )
        if options.get("queue"):  # many workers: the distributed front end takes it from here
            if program:
                raise UsageInvalid(
                    "--queue runs recipes on workers; a program runs in this process",
                    fix="Drop --queue, or queue a recipe.",
                )
            from northstar.cli.distributed_commands import run_queued

            run_queued(request, options)
            return
        settings = browser_settings(options)

        progress = make_progress(request.repeat.count, as_json=options["as_json"])

        def start(stop: StopSignal, on_result: Callable[[IterationResult], None]) -> Any:
            common: dict[str, Any] = {
                "browser": settings,
                "journal_path": options["journal"],
                "stop": stop,
                "on_result": on_result,
                "on_start": lambda run_id: notice(f"run {run_id}"),
            }
            if program:  # a program's steps are the SDK's calls: progress per iteration
                return run_program(request, **common)
            hooks = ProgressHooks(progress) if progress else None
            return run_recipe(request, hooks=hooks, **common)

        outcome = run_on_loop(
            run_with_signals(
                start, total=request.repeat.count, as_json=options["as_json"], progress=progress
            )
        )
        if program and not options["as_json"]:
            click.echo(model_calls_line([result.model_calls for result in outcome.results]))
        journal = resolve_journal(options["journal"])
        sys.exit(report_ending(outcome, journal, as_json=options["as_json"], echo=click.echo))


@click.command()
@click.argument("recipes", nargs=-1, required=True, type=click.Path())
def validate(recipes: tuple[str, ...]) -> None:
    """Check recipe files without running them (schema, tab roles, templates)."""
    failed = 0
    for path in recipes:
        try:
            compiled = program_compiled(path) if is_program(path) else load_compiled(path)
        except NorthstarError as exc:
            report_error(exc)
            failed += 1
            continue
        recipe = compiled.recipe
        what = "a program" if is_program(path) else f"{len(recipe.steps)} steps"
        click.echo(f"ok {path}: {recipe.name} v{recipe.version}, {what}")
        if not is_program(path):
            print_warnings(path, lambda line: click.echo(line, err=True))  # advice only
    sys.exit(EXIT_CODES["usage_error"] if failed else 0)
