"""The programs an agent may call: the recipes in the server's folders, read on each call.

Recipes are read again on every ``list_programs``, ``describe_program`` and
``call_program``, so an edited recipe is seen at once and a run binds the definition that
was actually described. A file that is not a valid recipe is listed as a problem with its
one-line error instead of hiding the others; when two files use the same name the first
folder (then the first file name) wins and the other is listed as a problem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from northstar.composition import load_compiled
from northstar.errors import NorthstarError, UsageInvalid
from northstar.plan.model import CompiledRecipe

__all__ = ["RECIPE_SUFFIXES", "Catalogue", "Program", "ProgramProblem", "read_catalogue"]

RECIPE_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Program:
    path: Path
    compiled: CompiledRecipe

    @property
    def name(self) -> str:
        return self.compiled.recipe.name


@dataclass(frozen=True)
class ProgramProblem:
    path: Path
    error: NorthstarError


@dataclass(frozen=True)
class Catalogue:
    programs: dict[str, Program] = field(default_factory=dict)
    problems: list[ProgramProblem] = field(default_factory=list)

    def find(self, name: str) -> Program:
        """The program called ``name``; an unknown name is a usage error naming the fix."""
        if name in self.programs:
            return self.programs[name]
        raise UsageInvalid(
            f"no program named {name!r} in the server's recipe folders",
            fix="Call list_programs for the names, or add the recipe to a --recipes folder.",
        )


def recipe_files(folders: Sequence[Path]) -> list[Path]:
    """Every recipe file directly in each folder, folders in the order given, files sorted."""
    return [
        path
        for folder in folders
        for path in sorted(folder.iterdir() if folder.is_dir() else [])
        if path.suffix in RECIPE_SUFFIXES and path.is_file()
    ]


def read_catalogue(
    folders: Sequence[Path], load: Callable[[Path], CompiledRecipe] = load_compiled
) -> Catalogue:
    """Load every recipe file; bad files and shadowed names become problems, not failures."""
    catalogue = Catalogue()
    for path in recipe_files(folders):
        try:
            program = Program(path, load(path))
        except NorthstarError as exc:
            catalogue.problems.append(ProgramProblem(path, exc))
            continue
        if program.name in catalogue.programs:
            first = catalogue.programs[program.name].path
            shadowed = UsageInvalid(
                f"{path}: the name {program.name!r} is already used by {first}",
                fix="Give each recipe in the server's folders its own name.",
            )
            catalogue.problems.append(ProgramProblem(path, shadowed))
            continue
        catalogue.programs[program.name] = program
    return catalogue
