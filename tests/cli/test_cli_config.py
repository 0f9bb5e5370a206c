"""The command line reads the project file: a base URL in ``pyproject.toml`` instead of
``--base-url`` on every call, the variable and the flag winning over it, and a rows file
whose extra columns (a spreadsheet's notes) are left out or mapped by the run's options.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from northstar.cli._inputs import build_request
from northstar.plan.compiler import recipe_hash
from tests.cli.test_cli_run import northstar, one_error_line

RECIPE = """\
name: facts
params:
  who: {type: string, required: true}
tabs:
  site: {start: "{{ base_url }}/browser?who={{ who }}"}
steps:
  - id: facts
    tab: site
    verify_outcome: {visible: {role: heading, name: Browser facts}}
"""
ROWS = "Who,notes\nada,call back on Monday\ngrace,\n"


def a_project(tmp_path: Path, base_url: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "shop"\n\n[tool.northstar]\nbase_url = "{base_url}"\n'
    )
    (tmp_path / "facts.yaml").write_text(RECIPE)
    (tmp_path / "rows.csv").write_text(ROWS)
    return tmp_path


@pytest.mark.browser
def test_the_base_url_comes_from_the_project_file_and_the_variable_and_flag_win(
    tmp_path: Path, site: FixtureSite
) -> None:
    root = a_project(tmp_path, site.base_url)
    from_file = northstar("run", "facts.yaml", "-p", "who=ada", cwd=root)
    assert from_file.returncode == 0, from_file.stderr
    assert "1 of 1 iterations verified" in from_file.stderr + from_file.stdout

    bad = {"NORTHSTAR_BASE_URL": "htp://127.0.0.1:1"}
    from_env = northstar("run", "facts.yaml", "-p", "who=ada", cwd=root, extra_env=bad)
    assert "htp://127.0.0.1:1" in one_error_line(from_env, "PARAM_INVALID")["body"]

    flag = ("--base-url", site.base_url)
    from_flag = northstar("run", "facts.yaml", "-p", "who=ada", *flag, cwd=root, extra_env=bad)
    assert from_flag.returncode == 0, from_flag.stderr


@pytest.mark.browser
def test_extra_columns_are_refused_by_name_then_mapped_and_left_out(
    tmp_path: Path, site: FixtureSite
) -> None:
    root = a_project(tmp_path, site.base_url)
    refused = northstar("run", "facts.yaml", "--params-file", "rows.csv", cwd=root)
    error = one_error_line(refused, "USAGE_INVALID")
    assert "column 'Who' is not a parameter of the recipe" in error["body"]
    assert "--ignore-column 'Who'" in error["fix"]
    assert "--column PARAM='Who'" in error["fix"]

    mapped = ("--column", "who=Who")
    notes = northstar("run", "facts.yaml", "--params-file", "rows.csv", *mapped, cwd=root)
    assert "column 'notes' is not a parameter" in one_error_line(notes, "USAGE_INVALID")["body"]

    for leave_out in (("--ignore-column", "notes"), ("--ignore-extra-columns",)):
        ran = northstar(
            "run", "facts.yaml", "--params-file", "rows.csv", *mapped, *leave_out, cwd=root
        )
        assert ran.returncode == 0, ran.stderr
        assert "2 of 2 iterations verified" in ran.stderr + ran.stdout


def test_a_column_mapped_to_no_parameter_is_refused(tmp_path: Path) -> None:
    root = a_project(tmp_path, "http://127.0.0.1:8000")
    wrong = ("--column", "whom=Who")
    ran = northstar("run", "facts.yaml", "--params-file", "rows.csv", *wrong, cwd=root)
    assert "the recipe has no parameter 'whom'" in one_error_line(ran, "USAGE_INVALID")["body"]


def test_a_broken_project_file_is_one_error_line(tmp_path: Path) -> None:
    root = a_project(tmp_path, "http://127.0.0.1:8000")
    (root / "northstar.toml").write_text("timeout = 0\n")
    ran = northstar("run", "facts.yaml", "-p", "who=ada", cwd=root)
    assert "timeout from" in one_error_line(ran, "CONFIG_INVALID")["body"]
    assert ran.returncode == 2


def test_the_default_timeout_applies_to_recipes_that_set_none(tmp_path: Path) -> None:
    root = a_project(tmp_path, "http://127.0.0.1:8000")
    options = {"recipe": str(root / "facts.yaml"), "params": ("who=ada",), "timeout": 1500}
    options |= {"params_file": None, "base_url": "http://127.0.0.1:8000"}
    request = build_request(options)
    assert request.compiled.recipe.timeout == 1500
    # The project's default is the run's setting, not the procedure: the hash is the file's.
    (root / "own.yaml").write_text(RECIPE.replace("params:", "timeout: 700\nparams:"))
    assert (
        request.compiled.recipe_hash
        == build_request({**options, "timeout": None}).compiled.recipe_hash
    )
    own = build_request({**options, "recipe": str(root / "own.yaml")})
    assert own.compiled.recipe.timeout == 700
    assert recipe_hash(own.compiled.recipe) == own.compiled.recipe_hash
