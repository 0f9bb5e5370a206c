"""``northstar run`` and ``validate``: the commands that start or check recipes."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any

import click

from northstar._early_start import run_on_loop
from northstar._stop_requests import catch_stop_signals, on_stop_request
from northstar.browser.settings import BrowserSettings
from northstar.cli._ci_results import check_ci_targets, ci_result_options, write_ci_results
from northstar.cli._debug_options import (
    check_break_at,
    debug_options,
    debug_settings,
    replay_inputs,
)
from northstar.cli._inputs import browser_options, build_request, input_options
from northstar.cli._options import journal_option
from northstar.cli._output import EXIT_CODES, expected_errors, notice, report_ending, report_error
from northstar.cli.lint_commands import print_warnings
from northstar.cli.progress import Progress, ProgressHooks
from northstar.composition import load_compiled, run_recipe
from northstar.errors import NorthstarError, UsageInvalid
from northstar.journal import Journal
from northstar.journal.paths import resolve_journal
from northstar.logs import json_logging
from northstar.plan.compiler import CompiledRecipe
from northstar.programs import is_program, program_compiled, run_program
from northstar.programs.running import refuse_unsupported
from northstar.programs.verdict import model_calls_line
from northstar.readers.rendering import probe_line
from northstar.recipe.params import row_values
from northstar.results import IterationResult
from northstar.run.execution import RunOutcome, RunRequest, StopSignal
from northstar.run.repeat import ON_FAILURE
from northstar.run.signin import without_sign_in

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
    "--probe-control-every",
    type=click.IntRange(0, 1_000_000),
    default=0,
    help="Run each reconcile probe's positive control on every Nth verified submission "
    "too (default: only the first of the run).",
)
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
@click.option(
    "--keep-state",
    type=click.Path(dir_okay=False),
    default=None,
    help="Keep the signed-in state the recipe's `setup` made in FILE (mode 0600); "
    "otherwise it is deleted when the run ends.",
)
@journal_option
@click.option("--queue", default=None, help="Enqueue the iterations for `northstar worker`s.")
@click.option("--detach", is_flag=True, help="With --queue: print the run id and return.")
@click.option("--project", default="default", show_default=True, help="Project the run binds.")
@browser_options
@debug_options
@ci_result_options
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary at the end.")
def run(**options: Any) -> None:
    """Run RECIPE (once, N times, or once per row) and verify every iteration."""
    with expected_errors(), replay_inputs(options) as options:
        program = is_program(options["recipe"])
        if program:
            refuse_unsupported(options)
        request = build_request(options, load=program_compiled if program else _loader(options))
        check_ci_targets(options)
        check_break_at(options, (step.id for step in request.compiled.recipe.steps))
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
        write_ci_results(journal, outcome.run_id, options, planned_rows(request))
        sys.exit(report_ending(outcome, journal, as_json=options["as_json"], echo=click.echo))


def _loader(options: Mapping[str, Any]) -> Callable[[Path], CompiledRecipe]:
    """How RECIPE is read: a case recorded signed in replays without signing in again."""
    if options.get("replay_signed_in"):
        return lambda path: without_sign_in(load_compiled(path))
    return load_compiled


def planned_rows(request: RunRequest) -> Callable[[int], dict[str, str] | None]:
    """Iteration ``n``'s values as the results files show them (each secret redacted)."""
    specs = request.compiled.recipe.params
    return lambda number: row_values(specs, request.row_for(number))


@click.command()
@click.argument("recipes", nargs=-1, required=True, type=click.Path())
@click.option(
    "--probe",
    is_flag=True,
    help="Also say whether each reconcile probe is proven (its positive control in the "
    "journal found a verified submission) for --base-url.",
)
@click.option("--base-url", help="With --probe: the site the probes' controls ran against.")
@journal_option
def validate(recipes: tuple[str, ...], **options: Any) -> None:
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
            if options["probe"]:
                for line in probe_lines(compiled, options["journal"], options["base_url"]):
                    click.echo(line)
    sys.exit(EXIT_CODES["usage_error"] if failed else 0)


def probe_lines(compiled: CompiledRecipe, journal: str | None, base_url: str | None) -> list[str]:
    """One line per submit step with a probe: proven, blind (and what it saw), or untried."""
    probed = [step.id for step in compiled.recipe.steps if step.reconcile]
    with Journal.open(journal) as opened:
        controls = {
            step: opened.probe_control(compiled.recipe_hash, base_url or "", step)
            for step in probed
        }
    return [probe_line(step, control) for step, control in controls.items()]
