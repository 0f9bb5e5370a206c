"""The definition guard: the recipe and the selected files a run started with.

A run is bound to its definition hash (DESIGN §5). Before every iteration dispatches
anything, ``execution`` calls ``DefinitionGuard.check``: a recipe whose definition changed
stops the run with ``DEFINITION_CHANGED``, a selected file (an upload) whose bytes changed
with ``FILE_CHANGED``; so does, on a worker of a queue, a file whose bytes are not the ones
the run was submitted with.
"""

from __future__ import annotations

from pathlib import Path

from northstar.errors import DefinitionChanged, FileChanged, NorthstarError
from northstar.plan.compiler import recipe_hash
from northstar.plan.model import Plan
from northstar.recipe.loader import load_recipe

__all__ = ["DefinitionGuard"]


class DefinitionGuard:
    """The recipe's definition and the selected files as they were when the run started.

    The definition is the canonical recipe (``recipe_hash``), so an edit that changes
    nothing (a comment, spacing) does not stop a run; the file is only re-read when its
    size or modification time changed.
    """

    def __init__(self, recipe_path: Path, recipe_digest: str) -> None:
        self.recipe_path = recipe_path
        self.recipe_digest = recipe_digest
        self._seen = _file_stamp(recipe_path)
        self.files: dict[str, str] = {}
        # The digests, in the plan's order, of the files the run was submitted with: a
        # worker on another machine checks its own copies against them, not against itself.
        self.submitted_files: tuple[str, ...] | None = None

    def check(self, plan: Plan) -> None:
        stamp = _file_stamp(self.recipe_path)
        if stamp != self._seen:
            if self._current_digest() != self.recipe_digest:
                raise DefinitionChanged(
                    f"the recipe {self.recipe_path} changed on disk since the run started",
                    iteration=plan.iteration,
                    path=str(self.recipe_path.resolve()),
                )
            self._seen = stamp
        self._check_submitted(plan)
        for path, digest in plan.files:
            known = self.files.setdefault(path, digest)
            if known != digest:
                raise FileChanged(
                    f"the selected file {path} changed since the run started",
                    iteration=plan.iteration,
                    path=path,
                )

    def _check_submitted(self, plan: Plan) -> None:
        if self.submitted_files is None:
            return
        if tuple(digest for _, digest in plan.files) != self.submitted_files:
            paths = ", ".join(path for path, _ in plan.files) or "none"
            raise FileChanged(
                f"the selected files here ({paths}) are not those the run was submitted with",
                iteration=plan.iteration,
                fix="Give every worker the same files as the submitting machine.",
            )

    def _current_digest(self) -> str | None:
        try:
            return recipe_hash(load_recipe(self.recipe_path))
        except NorthstarError:
            return None  # no longer a valid recipe: certainly not the same definition


def _file_stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns)
