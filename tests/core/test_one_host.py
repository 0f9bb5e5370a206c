"""One host: the submission sequence and the submission verdict are each written once.

Read with ``ast`` over ``northstar/``: a second module that writes the in-flight record,
records a dispatch, drives a browser action, pauses at the submit failpoints or judges a
repeated submission by its input fingerprint fails these tests. A new front end calls
``northstar.run.dispatch.StepDispatch`` and ``northstar.journal.submissions`` instead.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "northstar"


def modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(REPO).as_posix(), ast.parse(path.read_text(), str(path))


def _functions(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Every node with the name of the function it sits in ("" at module level)."""

    def walk(node: ast.AST, owner: str) -> Iterator[tuple[str, ast.AST]]:
        for child in ast.iter_child_nodes(node):
            name = (
                child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else owner
            )
            yield name, child
            yield from walk(child, name)

    yield from walk(tree, "")


def callers(method: str, *, delegating: bool = False) -> set[str]:
    """Modules that call ``x.method(...)`` or ``method(...)``.

    With ``delegating``, a call made inside a function of the same name (a recorder that
    passes a report on to the journal's) does not count.
    """
    found = set()
    for module, tree in modules():
        for owner, node in _functions(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == method and not (delegating and owner == method):
                found.add(module)
    return found


def literal_users(text: str) -> set[str]:
    return {
        module
        for module, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == text
    }


def test_only_the_dispatch_routine_writes_the_in_flight_record_and_the_dispatch() -> None:
    assert callers("submit_in_flight", delegating=True) == {"northstar/run/dispatch.py"}
    assert callers("submit_dispatched", delegating=True) == {"northstar/run/dispatch.py"}
    # The journal's own write, from plain values: the run's recorder, and the cost bench.
    assert callers("in_flight") == {"northstar/run/recorder.py", "northstar/journal/bench.py"}
    assert callers("open_submission") == {"northstar/journal/step_log.py"}


def test_only_the_front_ends_of_the_dispatch_routine_let_the_browser_act() -> None:
    acting = callers("perform") | callers("perform_on_reference")
    front_ends = {"northstar/run/runner.py", "northstar/agent/session.py"}
    # A saved recipe's dry replay acts only on the steps before its first submission (its
    # plain decision ``dry_steps``, tested), in a throwaway context: nothing can be sent.
    dry = {"northstar/agent/dry_replay.py"}
    assert acting == front_ends | dry | {"northstar/run/dispatch.py"}  # it calls their work
    for module in front_ends:
        assert "StepDispatch" in (REPO / module).read_text(), module


def test_the_submit_failpoints_sit_in_the_dispatch_routine_alone() -> None:
    for point in ("before_in_flight", "after_in_flight", "after_dispatch"):
        assert literal_users(point) == {
            "northstar/run/dispatch.py",
            "northstar/run/failpoints.py",
        }, point


def test_one_function_judges_a_repeated_submission() -> None:
    defined = {
        module
        for module, tree in modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "submission_verdict"
    }
    # The rule itself, and the session core's question to it (programs ask the core).
    assert defined == {"northstar/journal/submissions.py", "northstar/agent/session.py"}
    assert callers("submission_verdict", delegating=True) == {
        "northstar/journal/_steps.py",
        "northstar/agent/session.py",
        "northstar/programs/calls.py",
    }


def test_no_other_module_compares_input_fingerprints() -> None:
    comparing = set()
    for module, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(
                    isinstance(s, ast.Attribute) and s.attr == "input_fingerprint" for s in sides
                ):
                    comparing.add(module)
    assert comparing == {"northstar/journal/submissions.py"}


def test_the_program_broker_composes_the_agent_path_through_its_public_modules() -> None:
    private = []
    for module, tree in modules():
        if not module.startswith("northstar/programs/"):
            continue
        for node in ast.walk(tree):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                parts = name.split(".")
                if parts[:2] == ["northstar", "agent"] and any(p.startswith("_") for p in parts):
                    private.append(f"{module}: {name}")
    assert private == []
