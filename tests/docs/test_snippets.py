"""Every recipe and Python example in the docs and the README is validated or run.

- A ``yaml`` block whose top level has ``steps`` is a recipe: it is loaded with
  ``northstar.load`` (every static check). Any other ``yaml`` block must name the file it
  is (``title="compose.yaml"``) and parse as YAML: no recipe fragment escapes the check.
- A ``json`` block parses (a ``.jsonl`` one line by line): MCP hosts' configurations, rows.
- A ``python`` block is run against the fixture site, by what it is: a script in a fresh
  interpreter, a program with ``northstar run``, pytest files with pytest, a codegen
  recording converted by ``import_codegen`` into the recipe shown beside it.
- The first tutorial (write a recipe, run it from a five-row CSV, look at the report) runs
  end to end with the CLI, and the README's copy of it is the tutorial's.

The pages call the practice site ``http://127.0.0.1:8000``; the tests put the fixture
site's real address in its place.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import northstar
from browser_adapters.discovery import find_browser
from fixtures.site_server import FixtureSite
from northstar.authoring import import_codegen
from tests.conftest import REPO
from tests.docs.snippets import DOCS, DOCUMENTED_SITE, Block, blocks, pages, titled

FIRST_RECIPE = DOCS / "tutorials" / "first-recipe.md"
YAML_BLOCKS = blocks("yaml")
PYTHON_BLOCKS = blocks("python")


def is_recipe(block: Block) -> bool:
    loaded = yaml.safe_load(block.body)
    return isinstance(loaded, dict) and "steps" in loaded


def python_kind(block: Block) -> str:
    if "PROGRAM = {" in block.body:
        return "program"
    if "playwright.async_api" in block.body:
        return "recording"
    name = Path(block.title or "").name
    if name == "conftest.py" or name.startswith("test_"):
        return "pytest"
    return "script"


def of_kind(kind: str) -> list[Block]:
    return [block for block in PYTHON_BLOCKS if python_kind(block) == kind]


def where(block: Block) -> str:
    return block.where


def run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A process as a user starts it: no NORTHSTAR_ settings of ours, a journal in ``cwd``."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
    environment["NORTHSTAR_JOURNAL"] = str(cwd / ".northstar" / "journal.db")
    environment.update(env or {})
    return subprocess.run(
        args, cwd=cwd, env=environment, capture_output=True, text=True, timeout=180, check=False
    )


def project(tmp_path: Path, *sources: Block) -> Path:
    """A folder holding each titled block as its file, and the repository's recipes."""
    (tmp_path / "recipes").symlink_to(REPO / "recipes")
    for block in sources:
        assert block.title, block.where
        target = tmp_path / block.title
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.write_text(block.body, encoding="utf-8")
    return tmp_path


def northstar_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "northstar", *args], cwd, env)


# The fixture site's password, given as the pages tell a user to give a secret.
PAGES_SECRETS = {"NORTHSTAR_SECRET_PASSWORD": "demo-password"}


# ---------------------------------------------------------------------------- YAML


def test_the_pages_hold_recipes_and_python_examples() -> None:
    recipes = [b for b in YAML_BLOCKS if is_recipe(b)]
    assert len(recipes) >= 10, [b.where for b in recipes]
    assert {python_kind(b) for b in PYTHON_BLOCKS} == {"program", "recording", "pytest", "script"}


@pytest.mark.parametrize("block", YAML_BLOCKS, ids=where)
def test_each_yaml_block_is_a_valid_recipe_or_a_named_file(block: Block, tmp_path: Path) -> None:
    if not is_recipe(block):
        assert block.title, f"{block.where}: a YAML block that is not a recipe names its file"
        yaml.safe_load(block.body)
        return
    path = tmp_path / Path(block.title or "recipe.yaml").name
    path.write_text(block.body, encoding="utf-8")
    compiled = northstar.load(path)
    assert compiled.recipe.steps


@pytest.mark.parametrize("block", blocks("json"), ids=where)
def test_each_json_block_parses(block: Block) -> None:
    lines = block.body.splitlines() if (block.title or "").endswith(".jsonl") else [block.body]
    for line in lines:
        json.loads(line)


def test_each_quoted_retry_policy_loads(tmp_path: Path) -> None:
    policies = [
        policy
        for page in pages()
        for policy in re.findall(r"`(retry: \{[^`]*\})`", page.read_text(encoding="utf-8"))
    ]
    assert policies
    for number, policy in enumerate(policies):
        path = tmp_path / f"retry-{number}.yaml"
        path.write_text(
            f"name: retry-{number}\n{policy}\ntabs:\n  site: {{start: 'http://127.0.0.1:9/'}}\n"
            "steps:\n  - {id: open, tab: site, goto: /}\n",
            encoding="utf-8",
        )
        assert northstar.load(path).recipe.retry is not None


# ---------------------------------------------------------------------------- Python


def test_every_python_block_parses() -> None:
    for block in PYTHON_BLOCKS:
        ast.parse(block.body, filename=block.where)


@pytest.mark.parametrize("block", of_kind("recording"), ids=where)
def test_a_recording_converts_to_the_recipe_shown_beside_it(block: Block) -> None:
    stem = Path(block.title or "example.py").stem
    recipe = titled(block.page, f"recipes/{stem}.yaml")
    converted = import_codegen(block.body, name=stem, source=block.title or "example.py")
    assert converted.text == recipe.body


@pytest.mark.browser
@pytest.mark.parametrize("block", of_kind("script"), ids=where)
def test_a_script_runs_against_the_fixture_site(
    block: Block, tmp_path: Path, site: FixtureSite
) -> None:
    script = block.body.replace(DOCUMENTED_SITE, site.base_url)
    proc = run([sys.executable, "-c", script, site.base_url], project(tmp_path))
    assert proc.returncode == 0, f"{block.where}\n{proc.stdout}\n{proc.stderr}"


@pytest.mark.browser
@pytest.mark.parametrize("block", of_kind("program"), ids=where)
def test_a_program_validates_and_verifies_an_iteration(
    block: Block, tmp_path: Path, site: FixtureSite
) -> None:
    folder = project(tmp_path, block)
    assert block.title is not None
    validated = northstar_cli("validate", block.title, cwd=folder)
    assert validated.returncode == 0, validated.stderr
    ran = northstar_cli(
        "run", block.title, "--base-url", site.base_url, "--json", cwd=folder, env=PAGES_SECRETS
    )
    assert ran.returncode == 0, f"{ran.stdout}\n{ran.stderr}"
    assert json.loads(ran.stdout)["verified"] == 1


@pytest.mark.browser
@pytest.mark.parametrize(
    "page",
    sorted({block.page for block in of_kind("pytest")}),
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_pytest_files_pass_against_the_fixture_site(
    page: Path, tmp_path: Path, site: FixtureSite
) -> None:
    files = [b for b in blocks("python", page) if python_kind(b) == "pytest"]
    folder = project(tmp_path, *files, titled(FIRST_RECIPE, "publish.yaml"))
    browser = find_browser()
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:playwright-asyncio"]
    command += ["-p", "no:cacheprovider", "--base-url", site.base_url, "--rootdir", str(folder)]
    environment = {"NORTHSTAR_BROWSER": browser} if browser else {}
    proc = run([*command, str(folder)], folder, env=environment)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    tests = sum(len(re.findall(r"^def test_", f.body, re.MULTILINE)) for f in files)
    assert f"{tests} passed" in proc.stdout, proc.stdout


# ---------------------------------------------------------------------------- the first recipe


def test_the_readme_first_recipe_is_the_tutorials() -> None:
    readme = REPO / "README.md"
    for title in ("publish.yaml", "posts.csv"):
        assert titled(readme, title).body == titled(FIRST_RECIPE, title).body


@pytest.mark.browser
def test_the_first_recipe_runs_once_per_csv_row_and_reports(
    tmp_path: Path, site: FixtureSite
) -> None:
    folder = project(
        tmp_path, titled(FIRST_RECIPE, "publish.yaml"), titled(FIRST_RECIPE, "posts.csv")
    )
    ran = northstar_cli(
        "run", "publish.yaml", "--params-file", "posts.csv", "--base-url", site.base_url, "--json",
        cwd=folder,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    summary = json.loads(ran.stdout)
    assert (summary["status"], summary["verified"], summary["requested"]) == ("verified", 5, 5)
    assert [item["title"] for item in site.submissions()] == [
        "Fish & chips", "Tea at four", "A walk by the river", "Notes on bread", "Hello, world",
    ]  # fmt: skip
    report = northstar_cli("report", summary["run_id"], cwd=folder)
    assert report.returncode == 0, report.stderr
    page = folder / ".northstar" / "runs" / summary["run_id"] / "report.html"
    assert page.is_file()
    assert "Fish &amp; chips" in page.read_text(encoding="utf-8")


def test_the_shipped_recipes_lint_clean_as_the_lint_guide_says() -> None:
    guide = (DOCS / "how-to" / "lint.md").read_text(encoding="utf-8")
    assert "The shipped recipes lint clean" in guide
    shipped = sorted(str(p.relative_to(REPO)) for p in (REPO / "recipes").glob("*.yaml"))
    printed = run([sys.executable, "-m", "northstar", "lint", *shipped], REPO)
    assert (printed.returncode, printed.stdout) == (0, ""), printed.stderr
