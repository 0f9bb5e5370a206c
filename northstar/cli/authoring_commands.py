"""``northstar import-codegen`` and ``northstar codegen``: recipes from Playwright's recorder.

Both write the recipe, then validate it exactly as ``northstar validate`` does. A recipe
that does not validate yet (a submission the recording never checked) is still written,
with its ``TODO`` comments, and the command says so and exits 2. The recorder's temporary
script is deleted once converted: it holds every value typed, secrets included.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import click

from northstar.authoring import ImportedRecipe, import_codegen
from northstar.authoring.recorder import record, recorder_command, run_process
from northstar.cli._output import EXIT_CODES, expected_errors, format_error
from northstar.cli._writes import refuse_unsafe_target, write_text
from northstar.composition import load_compiled, recorder_browser
from northstar.errors import NorthstarError, UsageInvalid

__all__ = ["codegen", "import_codegen_command", "recorder_runner"]

_MAX_SCRIPT_BYTES = 1 << 20
_PLAIN = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
recorder_runner = run_process  # replaced in tests: the recorder needs a person and a display


@click.command("import-codegen")
@click.argument("script", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--to", "to", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", help="Recipe name (default: the file name of --to).")
@click.option("--force", is_flag=True, help="Replace an existing recipe file.")
def import_codegen_command(script: Path, to: Path, name: str | None, force: bool) -> None:
    """Convert a `playwright codegen --target python-async` script into a recipe (never run)."""
    with expected_errors():
        text = _read_script(script)
        _write_and_check(text, to, name, force, source=script.name)


@click.command()
@click.argument("url")
@click.option("--to", "to", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", help="Recipe name (default: the file name of --to).")
@click.option("--force", is_flag=True, help="Replace an existing recipe file.")
@click.option("--browser", help="Chromium executable (default: Northstar's browser discovery).")
def codegen(url: str, to: Path, name: str | None, force: bool, browser: str | None) -> None:
    """Record in Playwright's recorder, then convert its script into a recipe."""
    with expected_errors():
        refuse_unsafe_target(to, force=force, option="--to")  # before a person records anything
        with tempfile.TemporaryDirectory(prefix="northstar-codegen-") as folder:
            output = Path(folder) / "recording.py"
            command = recorder_command(
                url, output, executable=recorder_browser(browser), environ=os.environ
            )
            text = record(command, output, recorder_runner)
        _write_and_check(text, to, name, force, source=f"recorded at {url}")


def _write_and_check(text: str, to: Path, name: str | None, force: bool, *, source: str) -> None:
    recipe_name = name or to.stem
    if not _PLAIN.match(recipe_name):
        raise UsageInvalid(
            f"{recipe_name!r} is not a recipe name", fix="Use --name with a-z, 0-9, - _ ."
        )
    imported = import_codegen(text, name=recipe_name, source=source)
    write_text(to, imported.text, force=force, option="--to")
    _report(imported, to)


def _report(imported: ImportedRecipe, to: Path) -> None:
    secret = f" (secret: {', '.join(imported.secret_params)})" if imported.secret_params else ""
    click.echo(f"wrote {to}: {imported.steps} steps, {len(imported.params)} parameters{secret}")
    if imported.kept_as_comments:
        lines = ", ".join(str(n) for n in imported.kept_as_comments)
        click.echo(f"kept as comments (no recipe equivalent): script lines {lines}")
    try:
        load_compiled(to)
    except NorthstarError as exc:
        if imported.submissions_without_expect:
            ids = ", ".join(imported.submissions_without_expect)
            click.echo(
                f"not valid yet: submit step(s) {ids} have no `expect`; add what shows each "
                "submission happened (see the TODO comments), then run northstar validate",
                err=True,
            )
        click.echo(format_error(exc), err=True)
        sys.exit(EXIT_CODES["usage_error"])
    click.echo(f"ok: it validates. Run it: {_run_hint(imported, to)}")


def _run_hint(imported: ImportedRecipe, to: Path) -> str:
    hint = f"northstar run {to}"
    if imported.site is not None:
        hint += f" --base-url {imported.site}"
    return hint + "".join(f" -p {name}=..." for name in imported.secret_params)


def _read_script(script: Path) -> str:
    if not script.is_file():
        raise UsageInvalid(f"{script} is not a file", fix="Give the path of a codegen script.")
    if script.stat().st_size > _MAX_SCRIPT_BYTES:
        raise UsageInvalid(f"{script} is larger than 1 MiB", fix="Give a codegen script.")
    return script.read_text(encoding="utf-8")
