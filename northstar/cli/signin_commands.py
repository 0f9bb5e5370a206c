"""``northstar sign-in``: sign in once and save the state for later runs (``--state FILE``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from northstar._early_start import run_on_loop
from northstar.cli._inputs import browser_options, build_request, input_options
from northstar.cli._output import expected_errors, notice
from northstar.cli.run_commands import browser_settings
from northstar.composition import load_compiled, save_signed_in_state
from northstar.errors import UsageInvalid
from northstar.run.signin import sign_in_part

__all__ = ["sign_in"]

_BY_HAND_WAIT_MS = 10 * 60 * 1000  # a person with a second factor: ten minutes at most


@click.command("sign-in")
@click.argument("recipe", type=click.Path())
@input_options
@click.option(
    "--save-state",
    "save_state",
    required=True,
    type=click.Path(dir_okay=False),
    help="Where to save the signed-in state (written with mode 0600; keep it private).",
)
@browser_options
def sign_in(**options: Any) -> None:
    """Run RECIPE's `setup` once (or, with --headed, let a person sign in by hand until its
    `signed_in` checks hold) and save the signed-in state for `--state FILE`."""
    with expected_errors():
        if options.get("state"):
            raise UsageInvalid(
                "sign-in makes a state; it does not start from one", fix="Drop --state."
            )
        request = build_request(options, load=lambda path: sign_in_part(load_compiled(path)))
        save_to = Path(options["save_state"]).resolve()
        by_hand = bool(options.get("headed"))
        run_on_loop(
            save_signed_in_state(
                request,
                save_to,
                browser=browser_settings(options),
                by_hand=by_hand,
                wait_ms=_BY_HAND_WAIT_MS,
            )
        )
        notice(f"signed in; state saved to {save_to} (mode 0600: it holds live session cookies)")
    sys.exit(0)
