"""``northstar record``: run a recipe live once and keep it as a regression case.

The case (``case.json``, ``recording.har``, a page snapshot per step) is replayed
offline by ``northstar run RECIPE --replay DIR`` and by the pytest plugin. It is only
written when the recorded iteration verified. It does not touch the journal. A recipe
with ``setup`` signs in first, unrecorded (or starts from ``--state FILE``); a secret
missing from ``-p`` is read from ``NORTHSTAR_SECRET_<NAME>``, as ``run`` does.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import click

from northstar.cases.manifest import RegressionCase, secret_marker
from northstar.cli._inputs import browser_options, parse_param_pairs
from northstar.cli._options import configured_option
from northstar.cli._output import EXIT_CODES, expected_errors, print_result
from northstar.cli._secrets import missing_secrets
from northstar.cli.run_commands import browser_settings

__all__ = ["record"]


@click.command()
@click.argument("recipe", type=click.Path(dir_okay=False, exists=True))
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", help="A parameter.")
@configured_option("--base-url", setting="base_url")
@click.option(
    "--to",
    "to",
    required=True,
    type=click.Path(file_okay=False),
    help="The case folder to write (e.g. fixtures/cases/NAME/).",
)
@click.option("--force", is_flag=True, help="Replace the case if the folder exists.")
@browser_options
def record(**options: Any) -> None:
    """Run RECIPE once, live, and save it as a regression case in --to."""
    from northstar.cases.record_replay import record_case
    from northstar.composition import load_compiled

    with expected_errors():
        recipe = Path(options["recipe"])
        params = parse_param_pairs(options["params"])
        specs = load_compiled(recipe).recipe.params
        params |= missing_secrets(specs, params, None, environ=os.environ, ask=None)
        state = options.get("state")
        outcome = asyncio.run(
            record_case(
                recipe,
                params,
                to=Path(options["to"]),
                base_url=options["base_url"],
                browser=browser_settings(options),
                overwrite=options["force"],
                state=str(Path(state).resolve()) if state else None,
            )
        )
        print_result(outcome.result, echo=click.echo)
        if outcome.case is None:
            click.echo(f"not recorded: the iteration did not verify ({outcome.folder})", err=True)
            sys.exit(EXIT_CODES["not_verified"])
        click.echo(_recorded_line(outcome.case, outcome.folder))


def _recorded_line(case: RegressionCase, folder: Path) -> str:
    secrets = ", ".join(n for n, v in case.params.items() if v == secret_marker(n))
    return (
        f"recorded case {case.name!r} in {folder}"
        + (f" (secret parameters not kept: {secrets})" if secrets else "")
        + (f"; signed in by {case.signed_in}, not recorded" if case.signed_in else "")
    )
