"""The reference pages are generated from the code: a change there changes the page.

The pages (``scripts/docs_reference.py``) exist in no folder of the repository; the
MkDocs hook writes them into the site at build time, so nobody can edit them by hand.
"""

from __future__ import annotations

import gc
import json

import click
import pytest

from northstar.cli import cli
from northstar.cli._output import exit_code_for_error
from northstar.errors import BrowserError, NorthstarError, TargetMissing
from northstar.readers.ending_text import endings_table
from northstar.readers.endings import ENDINGS, Ending
from scripts import docs_reference
from tests.conftest import REPO


def commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli)
    found = [(name, cli.get_command(ctx, name)) for name in cli.list_commands(ctx)]
    return [(name, command) for name, command in found if command is not None]


def test_the_generated_pages_are_in_no_folder_and_in_the_nav() -> None:
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    for path in docs_reference.GENERATED_PAGES:
        assert not (REPO / "docs" / path).exists(), path
        assert f": {path}\n" in nav, path


def test_the_cli_page_has_every_command_and_every_option() -> None:
    page = docs_reference.cli_page(cli)
    for name, command in commands():
        assert f"## `{name}`" in page
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if isinstance(param, click.Option):
                    assert opt in page, (name, opt)


def test_a_changed_cli_option_changes_the_page() -> None:
    before = docs_reference.cli_page(cli)
    run = cli.get_command(click.Context(cli), "run")
    assert run is not None
    changed = click.Command(
        "run",
        params=[
            *run.params,
            click.Option(["--dry-run"], is_flag=True, help="Check every row, start nothing."),
        ],
        help=run.help,
    )
    group = click.Group("northstar", commands={"run": changed}, params=cli.params, help=cli.help)
    after = docs_reference.cli_page(group)
    assert "--dry-run" not in before
    assert "| `--dry-run` | Check every row, start nothing. |" in after


def test_a_changed_error_code_changes_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    before = docs_reference.errors_page(NorthstarError, exit_code_for_error)
    assert "`TARGET_MISSING`" in before
    monkeypatch.setattr(TargetMissing, "code", "TARGET_NOT_FOUND")
    after = docs_reference.errors_page(NorthstarError, exit_code_for_error)
    assert "`TARGET_MISSING`" not in after
    assert "`TARGET_NOT_FOUND`" in after


def test_a_new_error_class_appears_with_its_code_fix_and_exit_code() -> None:
    class PageTooLarge(BrowserError):
        """The page has more elements than a recipe may look through."""

        code = "PAGE_TOO_LARGE"
        default_fix = "Scope the target with `within`."

    try:
        page = docs_reference.errors_page(NorthstarError, exit_code_for_error)
        (row,) = [line for line in page.splitlines() if "`PAGE_TOO_LARGE`" in line]
        assert "`PageTooLarge`" in row
        assert "more elements than a recipe may look through" in row
        assert "Scope the target with `within`." in row
        assert row.endswith("| 1 |")
    finally:
        del PageTooLarge
        gc.collect()
    assert "PageTooLarge" not in {c.__name__ for c in BrowserError.__subclasses__()}


def test_the_errors_page_has_every_code_with_its_fix() -> None:
    page = docs_reference.errors_page(NorthstarError, exit_code_for_error)
    stack: list[type[NorthstarError]] = [NorthstarError]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        assert f"`{cls.code}`" in page
        assert cls("x").fix.replace("|", "\\|") in page


def test_the_exit_codes_page_is_the_table_of_endings() -> None:
    extra = Ending("paused", "a person paused it", 11, "resume it", codes=("PAUSED",))
    page = docs_reference.exit_codes_page(endings_table((*ENDINGS, extra)))
    assert "| `paused` | 11 | `PAUSED` |" in page
    for ending in ENDINGS:
        assert f"| `{ending.name}` | {ending.exit_code} |" in page


def test_the_schema_page_describes_every_field_of_every_object() -> None:
    schema = docs_reference.recipe_schema()
    page = docs_reference.schema_page(schema)
    objects = {"Recipe": schema, **schema["$defs"]}
    for name, definition in objects.items():
        section = page.split(f"## {name} {{ #{name.lower()} }}", 1)[1].split("\n## ", 1)[0]
        for field, prop in definition["properties"].items():
            assert prop.get("description"), f"{name}.{field} has no description"
            (row,) = [line for line in section.splitlines() if line.startswith(f"| `{field}` |")]
            assert " ".join(prop["description"].split()).replace("``", "`") in row


def test_a_new_schema_field_changes_the_page() -> None:
    schema = docs_reference.recipe_schema()
    schema["$defs"]["Step"]["properties"]["note"] = {
        "type": "string",
        "description": "A note for reviewers.",
    }
    assert "| `note` | string |" in docs_reference.schema_page(schema)


def test_the_benchmark_page_is_the_bench_commands_table_from_its_json() -> None:
    results = json.loads(docs_reference.BENCHMARK_RESULTS.read_text(encoding="utf-8"))
    page = docs_reference.benchmark_page(results)
    for figure in results["figures"].values():
        assert figure["name"] in page
    results["figures"]["run_ratio"]["value"] = 1.234
    assert "1.23x" in docs_reference.benchmark_page(results)


def test_the_benchmark_page_adds_the_signing_in_section_measured_alone_with_its_date() -> None:
    results = json.loads(docs_reference.BENCHMARK_RESULTS.read_text(encoding="utf-8"))
    figure = {"key": "signin_login_each_ratio", "name": "(f) ratio", "value": 0.567, "unit": "x"}
    signin = {"figures": {figure["key"]: figure}, "config": {"started_at": "2030-01-02T03:04"}}

    page = docs_reference.benchmark_page(results, signin)

    assert "## Signing in once" in page
    assert "0.57x" in page.split("## Signing in once")[1]
    assert "started at 2030-01-02T03:04" in page
    assert "## Signing in once" not in docs_reference.benchmark_page(results)
