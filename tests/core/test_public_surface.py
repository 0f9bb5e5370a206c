"""The exported names are pinned, and the core never loads Playwright.

Adding to a public surface is a decision: change the list here in the same commit.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import browser_adapters
import northstar

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "northstar"
# The composition root: the only core modules allowed to wire the adapter in. The CLI's
# early start boots Playwright's driver before the core is imported (a faster cold start).
COMPOSITION_ROOT = {"northstar.cli", "northstar._early_start", "northstar.composition"}
# Entry points that live under northstar/ but wire the adapter in (lazily, inside a
# function) like the CLI does. Each is a deliberate exception to DESIGN.md section 2;
# importing them must still not load Playwright (checked below).
SEPARATE_ENTRY_POINTS = {
    "northstar.bench.monitor_bench",
    "northstar.bench.run_bench",
    "northstar.cases.record_replay",  # record and replay regression cases
    "northstar.cases.pytest_plugin",  # the pytest11 entry point that runs recorded cases
    "northstar.cases.recipe_fixture",  # its northstar_recipe fixture, on a test's own page
    "northstar.cases.shared_browser",  # the one browser of a session's replayed cases
}
ADAPTER_PACKAGES = ("playwright", "browser_adapters")

NORTHSTAR_ALL = [
    "ActionRecord",
    "BehaviorMonitor",
    "BoundStep",
    "BoundTab",
    "CompiledRecipe",
    "Evidence",
    "IterationResult",
    "IterationState",
    "LoopSignal",
    "MonitorSettings",
    "NorthstarError",
    "Observation",
    "Plan",
    "ProgramIterationNotVerified",
    "ProgramRunner",
    "Recipe",
    "RepeatOptions",
    "RepeatSummary",
    "RunResult",
    "ScreenChange",
    "StepResult",
    "StepStatus",
    "bind",
    "compile_recipe",
    "load",
    "load_recipe",
    "parse_recipe",
    "prepare",
    "repeat_program",
    "run",
    "run_sync",
    "screen_change",
]

BROWSER_ADAPTERS_ALL = ["PlaywrightHost", "PlaywrightSession", "find_browser"]


def core_modules() -> list[str]:
    names = []
    for path in sorted(CORE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def run_python(script: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip().splitlines()[-1]


# --- exported names -------------------------------------------------------------------------


def test_northstar_all_is_pinned() -> None:
    assert sorted(northstar.__all__) == northstar.__all__
    assert northstar.__all__ == NORTHSTAR_ALL


def test_browser_adapters_all_is_pinned() -> None:
    assert sorted(browser_adapters.__all__) == browser_adapters.__all__
    assert browser_adapters.__all__ == BROWSER_ADAPTERS_ALL


@pytest.mark.parametrize(
    ("package", "names"),
    [("northstar", NORTHSTAR_ALL), ("browser_adapters", BROWSER_ADAPTERS_ALL)],
)
def test_every_exported_name_is_importable(package: str, names: list[str]) -> None:
    module = importlib.import_module(package)
    for name in names:
        assert getattr(module, name) is not None
    namespace: dict[str, object] = {}
    exec(f"from {package} import *", namespace)
    assert set(names) <= set(namespace)


def test_every_name_in_a_core_module_all_exists() -> None:
    for name in core_modules():
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", None)
        if exported is None:
            continue  # private helper modules (``_db``) need no __all__
        assert len(set(exported)) == len(exported), name
        for item in exported:
            assert hasattr(module, item), f"{name}.__all__ names missing {item!r}"


# --- the boundary ---------------------------------------------------------------------------


def test_importing_the_core_does_not_load_playwright() -> None:
    modules = [name for name in core_modules() if name not in COMPOSITION_ROOT]
    assert "northstar.run.runner" in modules
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted(m for m in sys.modules\n"
        f"    if m.split('.')[0] in {ADAPTER_PACKAGES!r})\n"
        "print(json.dumps(loaded))\n"
    )
    assert json.loads(run_python(script)) == []


def test_the_composition_root_imports_the_adapter_lazily() -> None:
    script = (
        "import sys, northstar.composition, northstar.cli\n"
        "print(any(m.split('.')[0] == 'playwright' for m in sys.modules))\n"
    )
    assert run_python(script) == "False"


def adapter_imports(path: Path) -> list[str]:
    """Every import of Playwright or the adapter in a file, lazy ones included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and _is_dynamic_import(node):
            first = node.args[0]
            assert isinstance(first, ast.Constant)
            names = [str(first.value)]
        line = getattr(node, "lineno", 0)
        found += [f"{path.name}:{line}: {name}" for name in names if _is_adapter(name)]
    return found


def _is_dynamic_import(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    first = call.args[0] if call.args else None
    is_text = isinstance(first, ast.Constant) and isinstance(first.value, str)
    return name in ("import_module", "__import__") and is_text


def _is_adapter(module: str) -> bool:
    return module.split(".")[0] in ADAPTER_PACKAGES


def test_no_core_file_imports_playwright_or_the_adapter() -> None:
    offenders = []
    for path in sorted(CORE.rglob("*.py")):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts)
        if module not in COMPOSITION_ROOT | SEPARATE_ENTRY_POINTS:
            offenders += adapter_imports(path)
    assert offenders == []


def test_the_import_check_finds_lazy_and_dynamic_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""browser_adapters and playwright in a docstring are fine."""\n'
        "def build():\n"
        "    from browser_adapters import PlaywrightHost\n"
        "    import playwright.async_api\n"
        "    importlib.import_module('browser_adapters.host')\n"
        "    from northstar import plan\n"
    )
    found = [line.split(": ")[1] for line in adapter_imports(sample)]
    assert found == ["browser_adapters", "playwright.async_api", "browser_adapters.host"]
