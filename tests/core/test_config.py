"""Project configuration: flag > environment > project file > default, and "not set" is not None."""

from __future__ import annotations

from pathlib import Path

import pytest

from northstar.config import SETTINGS, UNSET, Config, find_project_file, load_config
from northstar.errors import ConfigInvalid

PYPROJECT = """\
[project]
name = "shop-tests"

[tool.northstar]
base_url = "http://127.0.0.1:8000"
timeout = 2500

[tool.northstar.lint]
ignore = ["LINT_CSS_TARGET"]
"""


def project(tmp_path: Path, name: str = "pyproject.toml", text: str = PYPROJECT) -> Path:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_each_layer_wins_over_the_ones_below(tmp_path: Path) -> None:
    config = load_config(project(tmp_path), environ={})
    assert config.resolve("base_url").source == "project file"
    assert config.value("base_url") == "http://127.0.0.1:8000"
    with_env = load_config(tmp_path, environ={"NORTHSTAR_BASE_URL": "http://env:1"})
    assert with_env.resolve("base_url").value == "http://env:1"
    assert with_env.resolve("base_url").origin == "NORTHSTAR_BASE_URL"
    assert with_env.value("base_url", "http://flag:2") == "http://flag:2"
    assert with_env.resolve("browser").source == "default"
    assert with_env.value("browser") is None


def test_not_set_is_not_none(tmp_path: Path) -> None:
    config = load_config(project(tmp_path), environ={"NORTHSTAR_BASE_URL": ""})
    assert config.resolve("base_url", UNSET).source == "project file"  # empty variable: unset
    assert not UNSET
    assert repr(UNSET) == "UNSET"


def test_the_nearest_project_file_counts_and_northstar_toml_wins_beside_pyproject(
    tmp_path: Path,
) -> None:
    project(tmp_path)
    inner = tmp_path / "tests" / "e2e"
    inner.mkdir(parents=True)
    assert find_project_file(inner).path == tmp_path / "pyproject.toml"
    project(tmp_path, "northstar.toml", 'base_url = "https://toml.example"\n')
    assert load_config(inner, environ={}).value("base_url") == "https://toml.example"


def test_a_pyproject_without_a_northstar_table_is_passed_over(tmp_path: Path) -> None:
    project(tmp_path, text=PYPROJECT)
    inner = tmp_path / "sub"
    inner.mkdir()
    project(inner, text='[project]\nname = "other"\n')
    assert find_project_file(inner).path == tmp_path / "pyproject.toml"


def test_values_are_typed_and_lint_codes_read_from_a_list_or_a_variable(tmp_path: Path) -> None:
    config = load_config(project(tmp_path), environ={})
    assert config.value("timeout") == 2500
    assert config.value("timeout", "900") == 900  # a flag's text
    assert config.value("lint.ignore") == ("LINT_CSS_TARGET",)
    assert config.value("lint.select") == ()
    env = {"NORTHSTAR_LINT_SELECT": "LINT_UNUSED_PARAM, LINT_LOOSE_TARGET"}
    assert load_config(tmp_path, environ=env).value("lint.select") == (
        "LINT_UNUSED_PARAM",
        "LINT_LOOSE_TARGET",
    )


def test_an_unknown_key_names_the_file(tmp_path: Path) -> None:
    project(tmp_path, "northstar.toml", 'base_ulr = "http://x"\n')
    with pytest.raises(ConfigInvalid, match="unknown setting 'base_ulr'") as caught:
        load_config(tmp_path, environ={})
    assert str(tmp_path / "northstar.toml") in caught.value.message
    assert "base_url" in caught.value.fix


@pytest.mark.parametrize(
    ("text", "environ"),
    [
        ("timeout = 0\n", {}),
        ('timeout = "soon"\n', {}),
        ("base_url = 8000\n", {}),
        ("", {"NORTHSTAR_TIMEOUT": "ten"}),
        ("[lint]\nselect = 3\n", {}),
    ],
)
def test_a_value_of_the_wrong_type_is_config_invalid(
    tmp_path: Path, text: str, environ: dict[str, str]
) -> None:
    config = load_config(project(tmp_path, "northstar.toml", text), environ=environ)
    with pytest.raises(ConfigInvalid) as caught:
        [config.value(name) for name in SETTINGS]  # every setting is read
    assert caught.value.code == "CONFIG_INVALID"


def test_broken_toml_is_config_invalid(tmp_path: Path) -> None:
    with pytest.raises(ConfigInvalid, match="TOML"):
        load_config(project(tmp_path, "northstar.toml", "base_url = \n"), environ={})


def test_no_project_file_is_all_defaults(tmp_path: Path) -> None:
    config = Config(find_project_file(tmp_path), {})  # nothing above a pytest tmp folder
    assert config.project.path is None
    assert {name: config.resolve(name).source for name in SETTINGS} == dict.fromkeys(
        SETTINGS, "default"
    )
