"""A program's declaration and definition are read without running any of its code."""

from __future__ import annotations

from pathlib import Path

import pytest

from northstar.errors import RecipeInvalid
from northstar.programs import load_program
from northstar.programs.program_file import code_files, definition_digest, read_program_source

DECLARED = 'PROGRAM = {"name": "p", "tabs": {"site": {"start": "http://127.0.0.1:1/"}}}\n'


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_the_declaration_is_read_without_running_the_file(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = _write(
        tmp_path,
        "flow.py",
        f"open({str(marker)!r}, 'w').close()\n{DECLARED}async def main(nx):\n    pass\n",
    )
    declaration, compiled = load_program(path)
    assert declaration.name == "p"
    assert compiled.recipe.tabs["site"].start == "http://127.0.0.1:1/"
    assert not marker.exists()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("async def main(nx):\n    pass\n", "no module-level PROGRAM"),
        ("PROGRAM = dict(name='p')\nasync def main(nx):\n    pass\n", "not a literal"),
        (DECLARED, "entry point"),
        (DECLARED.replace('"p"', '"Bad Name"') + "async def main(nx): pass\n", "name"),
        ("PROGRAM = {\n", "line"),
    ],
)
def test_a_bad_program_file_is_recipe_invalid(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(RecipeInvalid, match=words):
        load_program(_write(tmp_path, "flow.py", text))


def test_the_definition_covers_the_local_modules_the_program_imports(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    _write(tmp_path, "helper.py", "import pkg.inner\nVALUE = 1\n")
    inner = _write(tmp_path / "pkg", "inner.py", "X = 1\n")
    _write(tmp_path / "pkg", "__init__.py", "")
    _write(tmp_path, "unused.py", "Y = 1\n")
    source = f"import json\nfrom helper import VALUE\n{DECLARED}async def main(nx): ...\n"
    path = _write(tmp_path, "flow.py", source)
    names = {p.relative_to(tmp_path).as_posix() for p in code_files(path)}
    assert names == {"flow.py", "helper.py", "pkg/__init__.py", "pkg/inner.py"}
    before = definition_digest(path, read_program_source(path))
    inner.write_text("X = 2\n")
    assert definition_digest(path, read_program_source(path)) != before


SIGN_IN = (
    '"setup": [{"id": "go", "tab": "site", "click": {"target": {"text": "Sign in"}}%s}], '
    '"signed_in": [{"tab": "%s", "visible": {"text": "Log out"}}]'
)


def _with_sign_in(submit: str = "", tab: str = "site") -> str:
    declared = DECLARED.replace("}}}", "}}, " + SIGN_IN % (submit, tab) + "}")
    return declared + "async def main(nx): ...\n"


def test_setup_and_signed_in_are_carried_into_the_compiled_recipe(tmp_path: Path) -> None:
    declaration, compiled = load_program(_write(tmp_path, "flow.py", _with_sign_in()))
    assert [step.id for step in compiled.recipe.setup] == ["go"]
    assert compiled.recipe.signed_in == declaration.signed_in


@pytest.mark.parametrize(
    ("submit", "tab", "words"),
    [
        (', "effect": "submit", "expect": [{"url": "**"}]', "site", "cannot be a submission"),
        ("", "elsewhere", "elsewhere"),
    ],
)
def test_the_recipe_rules_for_setup_hold_for_a_program(
    tmp_path: Path, submit: str, tab: str, words: str
) -> None:
    with pytest.raises(RecipeInvalid, match=words):
        load_program(_write(tmp_path, "flow.py", _with_sign_in(submit, tab)))
