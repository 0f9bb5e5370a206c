"""``northstar lint`` and ``schema``: advice about recipe files, and their format for editors.

Neither starts a browser or reads the journal. ``lint`` exits 1 when it has any warning
(``--exit-zero``: 0), 2 when a file is not a valid recipe; ``validate`` prints the same
warnings without changing its exit code.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from northstar.cli._output import EXIT_CODES, expected_errors, format_error
from northstar.cli._writes import write_text
from northstar.errors import NorthstarError, UsageInvalid, printable
from northstar.lint.files import format_warning, lint_file
from northstar.lint.rules import LintContext
from northstar.recipe.schema import recipe_json_schema

__all__ = ["lint", "print_warnings", "schema"]


def print_warnings(
    path: str, echo: Callable[[str], None], context: LintContext | None = None
) -> int:
    """Print the lint warnings of a valid recipe file; return how many there were."""
    warnings = lint_file(path, context)
    for warning in warnings:
        echo(printable(format_warning(warning)))
    return len(warnings)


def _page_sizes(pairs: tuple[str, ...]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for pair in pairs:
        role, _, count = pair.partition("=")
        if not role or not count.isdigit():
            raise UsageInvalid(
                f"--page-size {pair!r} is not TAB=ELEMENTS", fix="Write --page-size admin=2400."
            )
        sizes[role] = int(count)
    return sizes


@click.command()
@click.argument("recipes", nargs=-1, required=True, type=click.Path())
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are warnings.")
@click.option(
    "--page-size",
    "page_sizes",
    multiple=True,
    metavar="TAB=ELEMENTS",
    help="A recorded element count of a tab role's page (enables LINT_LARGE_PAGE_LOOKUP).",
)
def lint(recipes: tuple[str, ...], exit_zero: bool, page_sizes: tuple[str, ...]) -> None:
    """Warn about fragile parts of valid RECIPES: file:line:column: CODE message (better: ...)."""
    try:
        context = LintContext(page_sizes=_page_sizes(page_sizes) or None)
    except NorthstarError as exc:
        click.echo(format_error(exc), err=True)
        sys.exit(EXIT_CODES["usage_error"])
    warned = invalid = 0
    for path in recipes:
        try:
            warned += print_warnings(path, click.echo, context)
        except NorthstarError as exc:
            click.echo(format_error(exc), err=True)
            invalid += 1
    if invalid:
        sys.exit(EXIT_CODES["usage_error"])
    sys.exit(1 if warned and not exit_zero else 0)


@click.command()
@click.option(
    "--out", type=click.Path(dir_okay=False), help="Write the schema to this file (else stdout)."
)
@click.option("--force", is_flag=True, help="Replace the --out file if it exists.")
def schema(out: str | None, force: bool) -> None:
    """Print the JSON Schema of the recipe format (draft 2020-12, for editors)."""
    text = json.dumps(recipe_json_schema(), indent=2) + "\n"
    if out is None:
        click.echo(text, nl=False)
        return
    with expected_errors():  # `.northstar/` (where the shipped recipes look) may not exist yet
        write_text(Path(out), text, force=force, option="--out")
    click.echo(f"wrote {out}", err=True)
