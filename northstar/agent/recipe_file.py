"""Writing a drafted recipe: validated first, then ``FOLDER/NAME.yaml``, never over a file
unless asked.

The text is parsed and prepared exactly as ``northstar validate`` would before anything
touches the disk, so a file that is written always validates; its definition hash is the
one ``describe_program`` reports. An existing file is replaced only with ``overwrite``,
and then atomically (a sibling temporary file renamed over it).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from northstar.agent.recipe_draft import DraftedRecipe, plain_recipe_name
from northstar.errors import UsageInvalid
from northstar.plan.compiler import prepare
from northstar.recipe.loader import parse_recipe_positions

__all__ = ["write_recipe"]


def write_recipe(folder: Path, drafted: DraftedRecipe, *, overwrite: bool) -> tuple[Path, str]:
    """The path written and the recipe's definition hash."""
    path = folder / f"{plain_recipe_name(drafted.name)}.yaml"
    recipe, positions = parse_recipe_positions(drafted.text, source=str(path))
    digest = prepare(recipe, source=str(path), positions=positions).recipe_hash
    folder.mkdir(parents=True, exist_ok=True)
    if overwrite:
        _replace(path, drafted.text)
        return path, digest
    try:
        with path.open("x", encoding="utf-8") as out:
            out.write(drafted.text)
    except FileExistsError:
        raise UsageInvalid(
            f"{path} already exists", fix="Choose another name, or pass overwrite=true."
        ) from None
    return path, digest


def _replace(path: Path, text: str) -> None:
    """Atomic: a reader sees the old file or the new one, never half of it."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
