"""Northstar: run stored browser procedures (recipes) repeatedly, with proof of each run.

The core never imports Playwright; ``browser_adapters`` implements ``northstar.browser``.
"""

from northstar.compiler import CompiledRecipe, bind, compile_recipe, prepare
from northstar.errors import NorthstarError
from northstar.loader import load_recipe, parse_recipe
from northstar.plan import BoundStep, BoundTab, Plan
from northstar.recipe import Recipe
from northstar.results import Evidence, IterationResult, IterationState, StepResult, StepStatus
from northstar.runner import ProgramRunner

__all__ = [
    "BoundStep",
    "BoundTab",
    "CompiledRecipe",
    "Evidence",
    "IterationResult",
    "IterationState",
    "NorthstarError",
    "Plan",
    "ProgramRunner",
    "Recipe",
    "StepResult",
    "StepStatus",
    "bind",
    "compile_recipe",
    "load_recipe",
    "parse_recipe",
    "prepare",
]
