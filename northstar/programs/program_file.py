"""A program file read without running it: its declaration, entry point and local code.

The host must know a program's parameters, tab roles and completion checks before any of
its code runs, so the declaration is a literal (``PROGRAM = {...}``) read with ``ast``.
The definition hash covers the declaration and the code of the program and of every
module it imports from its own folder (found by walking ``import`` statements, never by
importing), so an edit to a helper module is a changed definition too.
"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path
from typing import Any

from northstar.errors import RecipeInvalid

__all__ = ["DECLARATION_NAME", "code_files", "definition_digest", "read_program_source"]

DECLARATION_NAME = "PROGRAM"
ENTRY_POINT = "main"


def _invalid(path: Path, message: str, fix: str) -> RecipeInvalid:
    return RecipeInvalid(f"{path}: {message}", fix=fix, file=str(path))


def _parse(path: Path) -> ast.Module:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(
            path, f"cannot be read ({exc.__class__.__name__})", "Pass a .py file."
        ) from None
    try:
        return ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise _invalid(
            path, f"line {exc.lineno}: {exc.msg}", "Fix the Python syntax error."
        ) from None


def _declaration_node(module: ast.Module) -> ast.expr | None:
    for node in module.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == DECLARATION_NAME for t in node.targets
        ):
            return node.value
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == DECLARATION_NAME
        ):
            return node.value
    return None


def _has_entry_point(module: ast.Module) -> bool:
    return any(
        isinstance(node, ast.AsyncFunctionDef) and node.name == ENTRY_POINT for node in module.body
    )


def read_program_source(path: str | Path) -> dict[str, Any]:
    """The literal ``PROGRAM`` declaration of a program file; its code is not run."""
    file = Path(path)
    module = _parse(file)
    node = _declaration_node(module)
    fix = 'Add a module-level literal: PROGRAM = {"name": ..., "tabs": {...}}.'
    if node is None:
        raise _invalid(file, f"no module-level {DECLARATION_NAME} declaration", fix)
    try:
        declared = ast.literal_eval(node)
    except ValueError:
        raise _invalid(file, f"{DECLARATION_NAME} is not a literal", fix) from None
    if not isinstance(declared, dict):
        raise _invalid(file, f"{DECLARATION_NAME} is not a dict", fix)
    if not _has_entry_point(module):
        raise _invalid(
            file,
            f"no `async def {ENTRY_POINT}(nx)` entry point",
            "Define async def main(nx: northstar.sdk.Session) -> None at module level.",
        )
    return declared


def _imported_names(module: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            names.update([node.module] if node.module else [alias.name for alias in node.names])
    # Importing ``a.b`` runs ``a/__init__.py`` too.
    return {".".join(n.split(".")[:i]) for n in names for i in range(1, n.count(".") + 2)}


def _local_file(folder: Path, dotted: str) -> Path | None:
    """The file a dotted name refers to under the program's folder, if any."""
    base = folder.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate.resolve()
    return None


def code_files(path: str | Path) -> list[Path]:
    """The program file and the local modules it imports, transitively, in a stable order."""
    start = Path(path).resolve()
    folder, seen, todo = start.parent, {start}, [start]
    while todo:
        module = _parse(todo.pop())
        for name in sorted(_imported_names(module)):
            found = _local_file(folder, name)
            if found is not None and found not in seen:
                seen.add(found)
                todo.append(found)
    return sorted(seen)


def definition_digest(path: str | Path, declaration: dict[str, Any]) -> str:
    """sha256 over the canonical declaration and the bytes of every local code file."""
    folder = Path(path).resolve().parent
    digest = hashlib.sha256(json.dumps(declaration, sort_keys=True, default=str).encode())
    for file in code_files(path):
        digest.update(str(file.relative_to(folder)).encode() + b"\0")
        digest.update(hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()
