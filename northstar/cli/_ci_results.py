"""``run --junit FILE`` and ``run --results FILE.csv|.jsonl``: a run's verdicts for CI.

The targets are checked before the run starts (a link, an existing file without
``--force``, an unknown suffix), so a long run never ends with a file it cannot write;
they are written once the run has ended, from the journal (``northstar.readers.ci_results``),
whatever the verdict: a failing run is when CI needs them most.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from northstar.cli._writes import refuse_unsafe_target, write_text
from northstar.errors import UsageInvalid
from northstar.readers.ci_results import PlannedRow, junit_xml, results_csv, results_jsonl
from northstar.readers.queries import get_run

__all__ = ["check_ci_targets", "ci_result_options", "write_ci_results"]

F = TypeVar("F", bound=Callable[..., Any])

_RESULTS_FORMATS: dict[str, Callable[..., str]] = {".csv": results_csv, ".jsonl": results_jsonl}


def ci_result_options(command: F) -> F:
    """The options of ``run`` that write results files."""
    for option in reversed(
        (
            click.option(
                "--junit",
                type=click.Path(dir_okay=False),
                help="Write JUnit XML: one test case per iteration, named by its row.",
            ),
            click.option(
                "--results",
                type=click.Path(dir_okay=False),
                help="Write one line per iteration (.csv or .jsonl): row, values, verdict.",
            ),
            click.option("--force", is_flag=True, help="Replace the --junit/--results files."),
        )
    ):
        command = option(command)
    return command


def check_ci_targets(options: dict[str, Any]) -> None:
    """``USAGE_INVALID`` before the run for a target that could not be written after it."""
    junit, results = options.get("junit"), options.get("results")
    if not (junit or results):
        return
    if options.get("queue"):
        raise UsageInvalid(
            "--junit and --results are written by the process that runs the iterations",
            fix="Drop --queue, or read the run later with northstar show RUN_ID --json.",
        )
    if results and Path(results).suffix.lower() not in _RESULTS_FORMATS:
        raise UsageInvalid(
            f"--results {results}: the format comes from the suffix",
            fix="Name the file FILE.csv or FILE.jsonl.",
        )
    if junit and results and Path(junit).absolute() == Path(results).absolute():
        raise UsageInvalid("--junit and --results name the same file", fix="Name two files.")
    for path, option in ((junit, "--junit"), (results, "--results")):
        if path:
            refuse_unsafe_target(Path(path), force=options.get("force", False), option=option)


def write_ci_results(
    journal: str | Path, run_id: str, options: dict[str, Any], planned: PlannedRow
) -> None:
    """Write the files asked for from the journal's record of ``run_id``.

    ``planned`` gives the row of an iteration that never began (its values, secrets
    redacted), so a run stopped early still names every row it was asked to run.
    """
    junit, results = options.get("junit"), options.get("results")
    if not (junit or results):
        return
    detail = get_run(journal, run_id)
    force = options.get("force", False)
    if junit:
        text = junit_xml(detail, planned, hostname=socket.gethostname())
        write_text(Path(junit), text, force=force, option="--junit")
    if results:
        render = _RESULTS_FORMATS[Path(results).suffix.lower()]
        write_text(Path(results), render(detail, planned), force=force, option="--results")
