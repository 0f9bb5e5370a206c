"""``northstar reconcile`` and ``resume``: settle unknown outcomes, then go on.

Both act on a run, so both present its credential: ``--credential``, else
``$NORTHSTAR_RUN_CREDENTIAL``, else the run's credential file (written, mode 0600, beside
the journal when the run started). Both take the run's inputs again (``-p``,
``--params-file``): the journal keeps only their fingerprints, never the values, and a
different input is refused.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

import click

from northstar._early_start import run_on_loop
from northstar.cli._inputs import browser_options, build_request, input_options
from northstar.cli._options import journal_option
from northstar.cli._output import exit_code_for_status, expected_errors, report_ending
from northstar.cli.run_commands import browser_settings, run_with_signals
from northstar.composition import reconcile as reconcile_probes
from northstar.composition import resolve_credential, run_options
from northstar.composition import resume as resume_iterations
from northstar.journal import Journal
from northstar.journal.paths import resolve_journal
from northstar.programs import is_program, program_compiled
from northstar.programs.running import reconcile_program_run, resume_program_run
from northstar.results import IterationResult
from northstar.run.execution import RunRequest, StopSignal
from northstar.run.identity import run_identity
from northstar.run.recovery import ReconcileDecision, decide_iteration, skip_iteration

__all__ = ["decision_line", "reconcile", "resume"]

credential_option = click.option(
    "--credential", help="The run's credential (default: the run's credential file)."
)


@click.command()
@click.argument("run_id")
@input_options
@click.option("--iteration", type=int, help="With --mark: the iteration a person decides on.")
@click.option(
    "--mark",
    type=click.Choice(["verified", "failed"]),
    help="A person's verdict instead of the probe: failed means it did not happen.",
)
@journal_option
@credential_option
@browser_options
def reconcile(**options: Any) -> None:
    """Find out what happened to RUN_ID's unknown submissions (read-only probes)."""
    with expected_errors(), Journal.open(options["journal"]) as journal:
        run_id: str = options["run_id"]
        credential = resolve_credential(journal, run_id, options["credential"])
        if options["mark"] is not None:
            mark: Literal["verified", "failed"] = options["mark"]
            decide_iteration(run_id, credential, options["iteration"] or 0, mark, journal=journal)
            click.echo(f"run {run_id}: iteration {options['iteration']} marked {mark}")
            return
        request, program = _request(journal, run_id, options)
        probes = reconcile_program_run if program else reconcile_probes
        decisions = run_on_loop(
            probes(run_id, credential, request, journal, browser=browser_settings(options))
        )
        for decision in decisions:
            click.echo(decision_line(decision))
        status = journal.run_record(run_id).status
        click.echo(f"run {run_id}: {status}{_next_step(status, decisions)}")
        sys.exit(exit_code_for_status(status if status in _EXIT_AS_IS else "verified"))


def _request(journal: Journal, run_id: str, options: dict[str, Any]) -> tuple[RunRequest, bool]:
    """The run's request again; a program's declaration is read by the program broker."""
    given = run_options(journal, run_id, options)
    if is_program(given["recipe"]):
        return build_request(given, load=program_compiled), True
    return build_request(given), False


# Reconcile itself succeeded unless a person must look, or an outcome is still settling.
_EXIT_AS_IS = frozenset({"needs_review", "blocked"})


def decision_line(decision: ReconcileDecision) -> str:
    """``iteration N: STATE [CODE] reason [step: outcome, ...]``: one line per iteration."""
    found = ", ".join(f"{step}: {outcome}" for step, outcome in decision.verdicts)
    return (
        f"iteration {decision.iteration}: {decision.state} [{decision.code}] {decision.reason}"
        + (f" [{found}]" if found else "")
    )


def _next_step(status: str, decisions: list[ReconcileDecision]) -> str:
    if status == "stopped":
        return "; resume it to go on"
    waits = [d.decidable_at for d in decisions if d.decidable_at is not None]
    if status == "blocked" and waits:
        return f"; reconcile again from {max(waits).isoformat(timespec='seconds')}"
    return ""


@click.command()
@click.argument("run_id")
@input_options
@journal_option
@credential_option
@browser_options
@click.option(
    "--skip",
    type=int,
    multiple=True,
    metavar="N",
    help="Leave failed iteration N out of the run (repeatable; needs --why).",
)
@click.option("--why", default="", help="With --skip: the reason, journaled with the row.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary at the end.")
def resume(**options: Any) -> None:
    """Continue RUN_ID's remaining iterations; never re-sends a settled submission."""
    with expected_errors(), Journal.open(options["journal"]) as journal:
        run_id: str = options["run_id"]
        credential = resolve_credential(journal, run_id, options["credential"])
        for number in options["skip"]:
            skip_iteration(run_id, credential, number, options["why"], journal=journal)
        request, program = _request(journal, run_id, options)

        # The iterations start from the run's own state, given --profile again or not.
        recorded = journal.run_record(run_id).profile
        identity = run_identity(request.profile, recorded_profile=recorded)
        browser = replace(browser_settings(options), storage_state=identity.storage_state)

        def start(stop: StopSignal, on_result: Callable[[IterationResult], None]) -> Any:
            if program:  # a program's iterations report through the journal, not on_result
                return resume_program_run(run_id, credential, request, journal, browser=browser)
            return resume_iterations(
                run_id,
                credential,
                request,
                journal,
                browser=browser,
                stop=stop,
                on_result=on_result,
            )

        outcome = run_on_loop(
            run_with_signals(start, total=request.repeat.count, as_json=options["as_json"])
        )
        target = resolve_journal(options["journal"])
        sys.exit(report_ending(outcome, target, as_json=options["as_json"], echo=click.echo))
