"""``northstar lint``, ``validate``'s warnings and ``schema --out`` as a person meets them.

The first test runs the command in a process of its own, as a person does; the others call
the same click command in this process (``CliRunner``), which is much faster.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fixtures.site_server import FixtureSite
from northstar.cli import cli
from northstar.recipe.schema import recipe_json_schema
from tests.cli.test_cli_run import ERROR_LINE, northstar
from tests.conftest import RECIPES

SHIPPED = sorted(str(p) for p in RECIPES.glob("*.yaml"))


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_the_shipped_recipes_lint_clean(tmp_path: Path) -> None:
    proc = northstar("lint", *SHIPPED, cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_all_rules_select_and_ignore_on_the_shipped_recipes() -> None:
    every = invoke("lint", "--select", "ALL", *SHIPPED)
    assert every.exit_code == 1
    codes = [line.split(" ")[1] for line in every.stdout.splitlines()]
    # The one rule off by default; members-note-login-each signs in per iteration, so a probe
    # (which runs without the sign-in) could not read its login-walled listing.
    assert codes == ["LINT_SUBMIT_WITHOUT_RECONCILE"] * 4
    ignored = invoke("lint", "--select", "ALL", "--ignore", "LINT_SUBMIT_WITHOUT_RECONCILE")
    assert ignored.exit_code == 2  # no recipe named: a usage error, not "clean"
    ignored = invoke(
        "lint", "--select", "ALL", "--ignore", "LINT_SUBMIT_WITHOUT_RECONCILE", *SHIPPED
    )
    assert (ignored.exit_code, ignored.stdout) == (0, "")
    one_error(invoke("lint", "--ignore", "LINT_NOPE", *SHIPPED), "USAGE_INVALID")


CSS_RECIPE = """\
name: css-form
tabs:
  site: {start: "{{ base_url }}/form"}
steps:
  - {id: email, tab: site, fill: {target: {css: "input[name=email]"}, value: a@b.test}}
  - {id: agree, tab: site, check: {target: {css: "input[name=agree]"}}}
"""


def test_the_project_file_selects_and_a_flag_wins(tmp_path: Path) -> None:
    recipe = tmp_path / "css.yaml"
    recipe.write_text(CSS_RECIPE, encoding="utf-8")
    (tmp_path / "northstar.toml").write_text('[lint]\nignore = ["LINT_CSS_TARGET"]\n')
    quiet = northstar("lint", str(recipe), cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout) == (0, "")
    flagged = northstar("lint", "--ignore", "LINT_UNUSED_PARAM", str(recipe), cwd=tmp_path)
    assert flagged.returncode == 1
    assert [line.split(" ")[1] for line in flagged.stdout.splitlines()] == ["LINT_CSS_TARGET"] * 2
    validated = northstar("validate", str(recipe), cwd=tmp_path)  # validate reads it too
    assert (validated.returncode, validated.stderr) == (0, "")


@pytest.mark.browser
def test_live_reads_the_role_and_name_of_each_css_target(tmp_path: Path, site: FixtureSite) -> None:
    recipe = tmp_path / "css.yaml"
    recipe.write_text(CSS_RECIPE, encoding="utf-8")
    plain = invoke("lint", str(recipe))
    assert "(better: a textbox: " in plain.stdout
    assert "(better: a checkbox: " in plain.stdout
    live = northstar("lint", "--live", f"{site.base_url}/form", str(recipe), cwd=tmp_path)
    assert live.returncode == 1, live.stderr
    assert live.stdout.splitlines() == [
        f"{recipe}:5:44: LINT_CSS_TARGET target 'input[name=email]' is CSS "
        "(better: {role: textbox, name: Email})",
        f"{recipe}:6:45: LINT_CSS_TARGET target 'input[name=agree]' is CSS "
        "(better: {role: checkbox, name: Agree to terms})",
    ]


def test_exit_zero_keeps_the_warnings_and_exits_0() -> None:
    result = invoke("lint", "--exit-zero", "--select", "ALL", str(RECIPES / "popup-chooser.yaml"))
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 1


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


def test_validate_prints_the_warnings_on_stderr_and_still_exits_0(tmp_path: Path) -> None:
    recipe = tmp_path / "css.yaml"
    recipe.write_text(CSS_RECIPE, encoding="utf-8")
    result = invoke("validate", str(recipe))
    assert result.exit_code == 0
    assert result.stdout.startswith(f"ok {recipe}: css-form v1")
    warnings = result.stderr.splitlines()
    assert [line.split(" ")[1] for line in warnings] == ["LINT_CSS_TARGET"] * 2


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
