"""``northstar lint``, ``validate``'s warnings and ``schema --out`` as a person meets them."""

from __future__ import annotations

import json
from pathlib import Path

from northstar.recipe.schema import recipe_json_schema
from tests.cli.test_cli_run import northstar, one_error_line, write
from tests.conftest import RECIPES

WARNING_LINE = r"^[^:]+:\d+:\d+: LINT_[A-Z_]+ .+$"
SHIPPED = sorted(str(p) for p in RECIPES.glob("*.yaml"))


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


def test_exit_zero_keeps_the_warnings_and_exits_0(tmp_path: Path) -> None:
    proc = northstar("lint", "--exit-zero", str(RECIPES / "login.yaml"), cwd=tmp_path)
    assert proc.returncode == 0
    assert len(proc.stdout.splitlines()) == 2


def test_a_clean_recipe_lints_silently(tmp_path: Path) -> None:
    proc = northstar("lint", str(RECIPES / "delayed-report.yaml"), cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_lint_of_an_invalid_recipe_is_one_error_line_and_exit_2(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.yaml", "name: x\ntabs: {}\nsteps: []\n")
    proc = northstar("lint", str(bad), cwd=tmp_path)
    assert proc.returncode == 2
    one_error_line(proc, "RECIPE_INVALID")


def test_validate_prints_the_warnings_on_stderr_and_still_exits_0(tmp_path: Path) -> None:
    proc = northstar("validate", str(RECIPES / "login.yaml"), cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.startswith(f"ok {RECIPES}/login.yaml: login v1")
    warnings = proc.stderr.splitlines()
    assert [line.split(" ")[1] for line in warnings] == ["LINT_LOOSE_TARGET"] * 2


def test_schema_out_writes_the_schema_file(tmp_path: Path) -> None:
    out = tmp_path / "recipe.schema.json"
    proc = northstar("schema", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert json.loads(out.read_text(encoding="utf-8")) == recipe_json_schema()
    printed = northstar("schema", cwd=tmp_path)
    assert json.loads(printed.stdout) == recipe_json_schema()


def test_page_size_enables_the_large_page_rule(tmp_path: Path) -> None:
    recipe = str(RECIPES / "publish-post.yaml")
    plain = northstar("lint", "--exit-zero", recipe, cwd=tmp_path)
    assert "LINT_LARGE_PAGE_LOOKUP" not in plain.stdout
    large = northstar("lint", "--exit-zero", "--page-size", "admin=2400", recipe, cwd=tmp_path)
    assert (
        f'{RECIPES}/publish-post.yaml:21:13: LINT_LARGE_PAGE_LOOKUP button "Publish" is looked '
        "up among 2400 elements of tab 'admin'"
    ) in large.stdout
    bad = northstar("lint", "--page-size", "admin", recipe, cwd=tmp_path)
    assert bad.returncode == 2
    one_error_line(bad, "USAGE_INVALID")
