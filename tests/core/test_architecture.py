"""The architecture's contracts (``[tool.importlinter]`` in pyproject.toml) are all there.

``scripts/test.sh`` runs ``lint-imports``, which fails the build when code breaks one; these
tests fail it when a contract is dropped or weakened, or a new package is left out of them.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CORE_PACKAGES = {"recipe", "plan", "run", "journal", "monitor", "readers", "lint", "authoring"}
# Packages and modules that may wire the adapter in: the front ends and the root itself.
FRONT_ENDS = {
    "api",
    "cli",
    "cases",
    "mcp",
    "programs",
    "agent",
    "distributed",
    "composition",
    "bench",
    "__main__",
    "_early_start",
    "_stop_requests",
}
# The client library a program is written with: it talks to the host, never the browser.
CLIENTS = {"sdk"}
SHARED = {"browser", "config", "errors", "fences", "results", "logs", "redaction", "_lazy"}


def contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config["include_external_packages"] is True  # else "playwright" is not checked
    return {contract["id"]: contract for contract in config["contracts"]}


def top_level_names() -> set[str]:
    core = REPO / "northstar"
    packages = {p.name for p in core.iterdir() if (p / "__init__.py").exists()}
    modules = {p.stem for p in core.glob("*.py") if p.stem != "__init__"}
    return packages | modules


def test_every_contract_is_listed() -> None:
    assert set(contracts()) == {
        "core-without-browser",
        "readers-apart",
        "adapter-below-front-ends",
        "run-without-readers",
        "journal-plain-values",
        "sdk-apart",
        "no-cycles",
        "layers",
    }


def test_the_core_is_kept_from_the_browser() -> None:
    rule = contracts()["core-without-browser"]
    assert {f"northstar.{name}" for name in CORE_PACKAGES | SHARED - {"_lazy"}} <= set(
        rule["source_modules"]
    )
    assert {"playwright", "browser_adapters"} <= set(rule["forbidden_modules"])


def test_every_part_of_northstar_is_core_shared_or_a_front_end() -> None:
    unplaced = top_level_names() - CORE_PACKAGES - FRONT_ENDS - SHARED - CLIENTS
    assert unplaced == set(), "place it in a contract in pyproject.toml, then here"


def test_readers_are_kept_from_what_starts_runs() -> None:
    rule = contracts()["readers-apart"]
    assert {
        "northstar.readers",
        "northstar.cli.journal_commands",
        "northstar.cli.report_commands",
    } <= set(rule["source_modules"])
    assert {"northstar.run", "northstar.composition", "browser_adapters"} <= set(
        rule["forbidden_modules"]
    )


def test_the_adapter_stays_below_the_front_ends() -> None:
    rule = contracts()["adapter-below-front-ends"]
    assert rule["source_modules"] == ["browser_adapters"]
    forbidden = {"northstar.journal", "northstar.run", "northstar.cases", "northstar.cli"}
    assert forbidden <= set(rule["forbidden_modules"])


def test_the_adapter_never_imports_the_engine_or_the_recorded_cases() -> None:
    rule = contracts()["adapter-below-front-ends"]
    assert {"northstar.run", "northstar.cases"} <= set(rule["forbidden_modules"])


def test_the_run_engine_never_imports_the_readers() -> None:
    rule = contracts()["run-without-readers"]
    assert rule["source_modules"] == ["northstar.run"]
    assert "northstar.readers" in rule["forbidden_modules"]


def test_the_journal_keeps_plain_values() -> None:
    rule = contracts()["journal-plain-values"]
    assert rule["source_modules"] == ["northstar.journal"]
    assert {"northstar.recipe", "northstar.plan"} <= set(rule["forbidden_modules"])


def test_no_cycles_between_siblings() -> None:
    rule = contracts()["no-cycles"]
    assert rule["type"] == "acyclic_siblings"
    assert set(rule["ancestors"]) == {"northstar", "browser_adapters"}


def test_authoring_sits_just_above_the_recipe_language() -> None:
    layers = contracts()["layers"]["layers"]
    assert layers.index("plan") < layers.index("authoring") == layers.index("recipe") - 1


def test_the_agent_front_end_sits_above_the_composition_root() -> None:
    layers = contracts()["layers"]["layers"]
    assert layers.index("agent") < layers.index("composition") < layers.index("run")


def test_lint_sits_over_plans_and_recipes_beside_the_browser_protocol() -> None:
    layers = contracts()["layers"]["layers"]
    assert "browser | lint" in layers
    assert layers.index("browser | lint") < layers.index("plan") < layers.index("recipe")


def test_the_program_broker_is_a_front_end_above_the_agent_path() -> None:
    layers = contracts()["layers"]["layers"]
    level = next(i for i, layer in enumerate(layers) if "programs" in layer.split(" | "))
    assert "mcp" in layers[level].split(" | ")
    assert level < layers.index("agent")


def test_the_sdk_reaches_nothing_but_the_host() -> None:
    rule = contracts()["sdk-apart"]
    assert rule["source_modules"] == ["northstar.sdk"]
    assert {"playwright", "browser_adapters", "northstar.journal"} <= set(rule["forbidden_modules"])


def test_the_api_is_a_front_end_beside_the_cli() -> None:
    layers = contracts()["layers"]["layers"]
    assert "cases | mcp | programs | api | distributed" in layers
    assert layers.index("cases | mcp | programs | api | distributed") < layers.index("composition")


def test_nothing_imports_the_run_engine_through_the_northstar_run_attribute() -> None:
    """``northstar.run`` is the API function, so ``import northstar.run.x as y`` breaks."""
    offenders = []
    for path in sorted((REPO / "northstar").rglob("*.py")) + sorted(REPO.glob("tests/**/*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("northstar.run.") and alias.asname:
                        offenders.append(f"{path}:{node.lineno}")
    assert offenders == []
