"""Where a missing secret comes from, as a pure decision: ``-p`` and the params file win,
then ``NORTHSTAR_SECRET_<NAME>``, then the prompt (only with a terminal)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from northstar.cli._secrets import exposed_params_file, missing_secrets
from northstar.errors import ParamMissing
from northstar.recipe.model import Param

SPECS = {
    "api_key": Param(secret=True, required=True),
    "note": Param(),
    "pin": Param(secret=True),
}


def asked(names: list[str]) -> Any:
    def ask(name: str) -> str:
        names.append(name)
        return f"typed-{name}"

    return ask


def test_a_given_value_wins_and_nothing_is_asked() -> None:
    names: list[str] = []
    env = {"NORTHSTAR_SECRET_API_KEY": "from-env"}
    given = {"api_key": "given", "pin": "1"}
    found = missing_secrets(SPECS, given, None, environ=env, ask=asked(names))
    assert (found, names) == ({}, [])


def test_the_environment_comes_before_the_prompt() -> None:
    names: list[str] = []
    env = {"NORTHSTAR_SECRET_API_KEY": "from-env"}
    found = missing_secrets(SPECS, {}, None, environ=env, ask=asked(names))
    assert found == {"api_key": "from-env", "pin": "typed-pin"}
    assert names == ["pin"]  # only secrets are asked for, never `note`


def test_secrets_every_row_gives_are_not_asked_for() -> None:
    names: list[str] = []
    rows = [{"api_key": "a", "pin": "1"}, {"api_key": "b", "pin": ""}]
    found = missing_secrets(SPECS, {}, rows, environ={}, ask=asked(names))
    assert (found, names) == ({"pin": "typed-pin"}, ["pin"])


def test_without_a_terminal_a_required_secret_names_its_variable() -> None:
    with pytest.raises(ParamMissing) as caught:
        missing_secrets(SPECS, {}, None, environ={}, ask=None)
    assert "NORTHSTAR_SECRET_API_KEY" in str(caught.value.fix)


def test_only_a_file_holding_a_secret_and_readable_by_others_is_warned(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text("{}", encoding="utf-8")
    path.chmod(0o640)
    assert exposed_params_file(path, SPECS, [{"note": "x"}]) is None  # no secret in it
    warning = exposed_params_file(path, SPECS, [{"pin": "pin-value-4711"}])
    assert warning is not None
    assert "secret parameter pin" in warning
    assert "(mode 0640)" in warning
    assert "4711" not in warning  # the value itself is never shown
    path.chmod(0o600)
    assert exposed_params_file(path, SPECS, [{"pin": "pin-value-4711"}]) is None
