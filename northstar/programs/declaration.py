"""A program's declaration: what the host knows before the program's code runs.

``PROGRAM = {"name", "version", "params", "tabs", "outputs", "done_when", "setup",
"signed_in"}`` uses the recipe's own parameter, tab role, step and check types, so a
program binds its parameters, its tab roles' origins, its completion checks and its
sign-in (``setup`` steps proven by ``signed_in`` checks, run once per run by
``northstar.run.signin``) exactly as a recipe does. Seen by the run
engine, a program is a recipe whose one step is the program itself: ``load_program``
returns that ``CompiledRecipe``, bound to the program's definition hash (declaration and
local code).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from northstar.errors import RecipeInvalid
from northstar.plan.compiler import CompiledRecipe, prepare
from northstar.programs.program_file import definition_digest, read_program_source
from northstar.recipe.loader import format_path
from northstar.recipe.model import Check, Param, Recipe, Step, TabRole

__all__ = ["DEFAULT_TIME_LIMIT_S", "PROGRAM_STEP", "ProgramDeclaration", "load_program"]

PROGRAM_STEP = "program"  # the one step a program is, as the run engine sees it
DEFAULT_TIME_LIMIT_S = 300.0  # a program silent this long is ended (``timeout_s``)


class ProgramDeclaration(BaseModel):
    """The literal ``PROGRAM`` of a program file, validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    version: int = Field(default=1, ge=1)
    description: str = ""
    timeout: int = Field(default=10_000, ge=1, le=600_000, description="default call ms")
    # Seconds the program may go without a call before the host ends it (see child_process).
    timeout_s: float = Field(default=DEFAULT_TIME_LIMIT_S, gt=0, le=86_400)
    params: dict[str, Param] = Field(default_factory=dict)
    tabs: dict[str, TabRole] = Field(min_length=1)
    outputs: list[str] = Field(default_factory=list)
    done_when: list[Check] = Field(default_factory=list)
    # Signed in once per run before the first iteration, as a recipe's (``run.signin``).
    setup: list[Step] = Field(default_factory=list)
    signed_in: list[Check] = Field(default_factory=list)

    @model_validator(mode="after")
    def _tabs_open_at_start(self) -> ProgramDeclaration:
        popups = [role for role, tab in self.tabs.items() if tab.start is None]
        if popups:
            raise ValueError(f"tab role {popups[0]!r} needs a `start` (popups: not yet)")
        return self

    def as_recipe(self) -> Recipe:
        """The recipe the run engine binds: the declaration, its one step the program."""
        first = next(iter(self.tabs))
        step = Step(id=PROGRAM_STEP, tab=first, verify_outcome=Check(url="**"))
        return Recipe(
            name=self.name,
            version=self.version,
            description=self.description,
            timeout=self.timeout,
            params=self.params,
            tabs=self.tabs,
            steps=[step],
            done_when=self.done_when,
            setup=self.setup,
            signed_in=self.signed_in,
        )


def _declaration(path: Path, declared: dict[str, Any]) -> ProgramDeclaration:
    try:
        return ProgramDeclaration.model_validate(declared)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = format_path(list(first["loc"]))
        raise RecipeInvalid(
            f"{path}: PROGRAM {where}: {first['msg']}",
            fix="Correct the declaration; it takes the recipe's params, tabs, checks and setup.",
            file=str(path),
        ) from None


def load_program(path: str | Path) -> tuple[ProgramDeclaration, CompiledRecipe]:
    """Read, validate and prepare a program file without running any of its code."""
    file = Path(path)
    declared = read_program_source(file)
    declaration = _declaration(file, declared)
    compiled = prepare(declaration.as_recipe(), source=str(file))
    return declaration, replace(compiled, recipe_hash=definition_digest(file, declared))
