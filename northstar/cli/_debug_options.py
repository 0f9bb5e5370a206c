"""``run``'s options for watching a recipe and for replaying a recorded case.

``--step``, ``--break-at STEP`` and ``--pause-on-failure`` wait for a person in
Playwright's Inspector, so they imply ``--headed``; before a step the terminal shows which
recipe step it is (id, kind, target, file and line). ``--trace`` writes
``iteration-NNNN-trace.zip`` beside the run's outputs, each recipe step a group in it.
``--replay DIR`` answers every request from the case's recording and uses
its base URL and parameters (``-p`` wins; a secret comes from ``-p`` or
``NORTHSTAR_SECRET_NAME``), so it needs no network and no server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from northstar.browser.settings import TRACE_MODES, DebugSettings
from northstar.cases.manifest import load_case, project_root, replay_params
from northstar.cli._inputs import parse_param_pairs
from northstar.composition import load_compiled
from northstar.errors import UsageInvalid

__all__ = ["check_break_at", "debug_options", "debug_settings", "replay_inputs"]

F = TypeVar("F", bound=Callable[..., Any])


def debug_options(command: F) -> F:
    """``--step``, ``--pause-on-failure``, ``--trace`` and ``--replay``."""
    for option in reversed(
        [
            click.option(
                "--step",
                is_flag=True,
                help="Show each recipe step (id, target, file:line) and pause before it "
                "(headed; Inspector).",
            ),
            click.option(
                "--break-at",
                "break_at",
                multiple=True,
                metavar="STEP",
                help="Pause before the step with this id only (repeatable; headed; Inspector).",
            ),
            click.option(
                "--pause-on-failure",
                is_flag=True,
                help="Pause at the failing step with its pages open (headed; Inspector).",
            ),
            click.option(
                "--trace",
                type=click.Choice(TRACE_MODES),
                default="off",
                show_default=True,
                help="A Playwright trace per iteration (it holds typed values, secrets too).",
            ),
            click.option(
                "--replay",
                type=click.Path(file_okay=False, exists=True),
                help="Answer every request from this recorded case (northstar record).",
            ),
        ]
    ):
        command = option(command)
    return command


def debug_settings(options: Mapping[str, Any]) -> DebugSettings:
    return DebugSettings(
        step=bool(options.get("step")),
        pause_on_failure=bool(options.get("pause_on_failure")),
        trace=options.get("trace") or "off",
        break_at=tuple(options.get("break_at") or ()),
    )


def check_break_at(options: Mapping[str, Any], step_ids: Iterable[str]) -> None:
    """``USAGE_INVALID`` for a ``--break-at`` that names no step: it would never pause."""
    known = list(step_ids)
    for wanted in options.get("break_at") or ():
        if wanted not in known:
            raise UsageInvalid(
                f"--break-at {wanted}: the recipe has no step with that id",
                fix=f"Name one of its steps: {', '.join(known)}.",
            )


@contextmanager
def replay_inputs(options: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``options`` with the case's base URL, parameters and HAR when ``--replay`` is given.

    The HAR with secret values put back is a private temporary file that lives as long
    as this block.
    """
    if not options.get("replay"):
        yield options
        return
    from northstar.cases.record_replay import replay_har

    case_dir = Path(options["replay"])
    case = load_case(case_dir)
    _check_replay_options(options, case.base_url)
    specs = load_compiled(options["recipe"]).recipe.params
    raw = replay_params(case, specs, project_root(case_dir), parse_param_pairs(options["params"]))
    secrets = {name: str(raw[name]) for name in case.secret_params if raw.get(name)}
    with replay_har(case_dir, case, secrets) as har:
        yield {
            **options,
            "params": tuple(f"{k}={v}" for k, v in raw.items() if v is not None),
            "base_url": case.base_url,
            "replay_har": str(har),
            "replay_signed_in": case.signed_in is not None,
        }


def _check_replay_options(options: Mapping[str, Any], recorded_base_url: str | None) -> None:
    if options.get("params_file"):
        raise UsageInvalid(
            "--replay uses the parameters the case was recorded with",
            fix="Drop --params-file; change single values with -p NAME=VALUE.",
        )
    given = options.get("base_url")
    if given and given != recorded_base_url:
        raise UsageInvalid(
            f"--replay answers from a recording made at {recorded_base_url}, not {given}",
            fix="Drop --base-url (and NORTHSTAR_BASE_URL) when replaying.",
        )
