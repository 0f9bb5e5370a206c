"""``northstar lint``, ``validate``'s warnings and ``schema --out`` as a person meets them.

The first test runs the command in a process of its own, as a person does; the others call
the same click command in this process (``CliRunner``), which is much faster.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from northstar.cli import cli
from northstar.recipe.schema import recipe_json_schema
from tests.cli.test_cli_run import ERROR_LINE, northstar
from tests.conftest import RECIPES

SHIPPED = sorted(str(p) for p in RECIPES.glob("*.yaml"))


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_lint_of_the_shipped_recipes_prints_one_line_each_and_exits_1(tmp_path: Path) -> None:
    proc = northstar("lint", *SHIPPED, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    found = proc.stdout.splitlines()
    assert len(found) == 12
    assert f"{RECIPES}/contact-form.yaml:12:3: LINT_UNUSED_PARAM parameter 'subscribe'" in (
        proc.stdout
    )
    assert (
        f'{RECIPES}/login.yaml:35:45: LINT_LOOSE_TARGET text "Signed in as" (substring, any '
        "case) matches any element whose text contains it (better: "
        '{text: "Signed in as {{ username }}"})'
    ) in found
    assert not any(line.startswith(f"{RECIPES}/delayed-report.yaml") for line in found)
    assert "LINT_LARGE_PAGE_LOOKUP" not in proc.stdout  # no recorded page sizes given


def test_exit_zero_keeps_the_warnings_and_exits_0() -> None:
    result = invoke("lint", "--exit-zero", str(RECIPES / "login.yaml"))
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 2


def test_a_clean_recipe_lints_silently() -> None:
    result = invoke("lint", str(RECIPES / "delayed-report.yaml"))
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def one_error(result: Result, code: str) -> None:
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    match = ERROR_LINE.match(line)
    assert match is not None, line
    assert match["code"] == code


def test_lint_of_an_invalid_recipe_is_one_error_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntabs: {}\nsteps: []\n", encoding="utf-8")
    one_error(invoke("lint", str(bad)), "RECIPE_INVALID")


def test_validate_prints_the_warnings_on_stderr_and_still_exits_0() -> None:
    result = invoke("validate", str(RECIPES / "login.yaml"))
    assert result.exit_code == 0
    assert result.stdout.startswith(f"ok {RECIPES}/login.yaml: login v1")
    warnings = result.stderr.splitlines()
    assert [line.split(" ")[1] for line in warnings] == ["LINT_LOOSE_TARGET"] * 2


def test_schema_out_writes_the_schema_file(tmp_path: Path) -> None:
    out = tmp_path / ".northstar" / "recipe.schema.json"  # its folder is made when missing
    result = invoke("schema", "--out", str(out))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == f"wrote {out}\n"
    assert json.loads(out.read_text(encoding="utf-8")) == recipe_json_schema()


def test_page_size_enables_the_large_page_rule() -> None:
    recipe = str(RECIPES / "publish-post.yaml")
    large = invoke("lint", "--exit-zero", "--page-size", "admin=2400", recipe)
    assert (
        f'{RECIPES}/publish-post.yaml:21:13: LINT_LARGE_PAGE_LOOKUP button "Publish" is looked '
        "up among 2400 elements of tab 'admin'"
    ) in large.stdout
    one_error(invoke("lint", "--page-size", "admin", recipe), "USAGE_INVALID")


def test_schema_out_that_cannot_be_written_is_one_error_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    one_error(invoke("schema", "--out", str(blocker / "recipe.schema.json")), "USAGE_INVALID")
