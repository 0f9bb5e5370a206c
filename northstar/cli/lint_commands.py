"""``northstar lint`` and ``schema``: advice about recipe files, and their format for editors.

Neither reads the journal, and only ``lint --live URL`` starts a browser (to read the role
and name of the elements CSS targets match there). ``lint`` exits 1 when it has any
warning (``--exit-zero``: 0), 2 when a file is not a valid recipe; ``validate`` prints the
same warnings without changing its exit code. The codes reported follow ``--select`` and
``--ignore``, else the project file's ``[lint]`` table (``northstar.config``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from northstar.cli._options import configured_option
from northstar.cli._output import EXIT_CODES, expected_errors, format_error
from northstar.cli._writes import write_text
from northstar.config import load_config
from northstar.errors import NorthstarError, UsageInvalid, printable
from northstar.lint.files import Selection, format_warning, lint_file
from northstar.lint.rules import CODES, DEFAULT_CODES, LintContext, LiveElement
from northstar.recipe.loader import load_recipe
from northstar.recipe.schema import recipe_json_schema

__all__ = ["lint", "print_warnings", "schema"]


def print_warnings(
    path: str,
    echo: Callable[[str], None],
    context: LintContext | None = None,
    selection: Selection | None = None,
) -> int:
    """Print the lint warnings of a valid recipe file; return how many there were.

    Without ``selection``, the project file's (or the environment's) ``lint`` settings.
    """
    if selection is None:
        config = load_config()
        selection = Selection.of(config.value("lint.select"), config.value("lint.ignore"))
    warnings = lint_file(path, context, selection)
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


def _live_elements(
    url: str, recipes: tuple[str, ...], browser: str | None
) -> dict[str, LiveElement]:
    """The role and name of what each CSS target of ``recipes`` matches at ``url``."""
    from northstar.composition import BrowserSettings, element_roles

    selectors = sorted({css for path in recipes for css in _css_targets(path)})
    if not selectors:
        return {}
    found = asyncio.run(element_roles(url, selectors, BrowserSettings(executable=browser)))
    return {css: LiveElement(role, name) for css, (role, name) in found.items()}


def _css_targets(path: str) -> set[str]:
    from northstar.lint._walk import iter_targets

    try:
        recipe = load_recipe(path)
    except NorthstarError:
        return set()  # reported when the file is linted
    return {target.css for _, target in iter_targets(recipe) if target.css and not target.frame}


def _list_rules() -> None:
    for code, summary in CODES.items():
        click.echo(f"{code:<32} {'on ' if code in DEFAULT_CODES else 'off'}  {summary}")


@click.command()
@click.argument("recipes", nargs=-1, type=click.Path())
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are warnings.")
@configured_option(
    "--select",
    setting="lint.select",
    metavar="CODES",
    help="Report only these codes (ALL: every rule).",
)
@configured_option(
    "--ignore", setting="lint.ignore", metavar="CODES", help="Leave these codes out."
)
@click.option(
    "--live",
    metavar="URL",
    help="Read the role and name of what each CSS target matches on this page, for advice.",
)
@configured_option("--browser", setting="browser")
@click.option("--list-rules", is_flag=True, help="List every code, whether it is on by default.")
@click.option(
    "--page-size",
    "page_sizes",
    multiple=True,
    metavar="TAB=ELEMENTS",
    help="A recorded element count of a tab role's page (enables LINT_LARGE_PAGE_LOOKUP).",
)
def lint(
    recipes: tuple[str, ...],
    exit_zero: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    live: str | None,
    browser: str | None,
    list_rules: bool,
    page_sizes: tuple[str, ...],
) -> None:
    """Warn about fragile parts of valid RECIPES: file:line:column: CODE message (better: ...).

    Silence one line with a comment: # northstar: noqa[CODE].
    """
    if list_rules:
        _list_rules()
        return
    try:
        if not recipes:
            raise UsageInvalid(
                "no recipe to lint", fix="Name recipe files: northstar lint recipes/*.yaml."
            )
        selection = Selection.of(select, ignore)
        elements = _live_elements(live, recipes, browser) if live else None
        context = LintContext(page_sizes=_page_sizes(page_sizes) or None, live=elements)
    except NorthstarError as exc:
        click.echo(format_error(exc), err=True)
        sys.exit(EXIT_CODES["usage_error"])
    warned = invalid = 0
    for path in recipes:
        try:
            warned += print_warnings(path, click.echo, context, selection)
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
