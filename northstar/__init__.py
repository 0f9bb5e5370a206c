"""Northstar: run stored browser procedures (recipes) repeatedly, with proof of each run.

The core never imports Playwright; ``browser_adapters`` implements ``northstar.browser``.
Names are imported on first use (PEP 562), so importing one module (the journal readers,
the loader) does not load the whole core and a command starts quickly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from northstar._lazy import lazy_exports

if TYPE_CHECKING:
    from northstar.errors import NorthstarError, ProgramIterationNotVerified
    from northstar.monitor.behavior import BehaviorMonitor, LoopSignal, MonitorSettings
    from northstar.monitor.fingerprints import ActionRecord
    from northstar.monitor.observation import Observation
    from northstar.monitor.screen_change import ScreenChange, screen_change
    from northstar.plan.compiler import CompiledRecipe, bind, compile_recipe, prepare
    from northstar.plan.model import BoundStep, BoundTab, Plan
    from northstar.recipe.loader import load_recipe, parse_recipe
    from northstar.recipe.model import Recipe
    from northstar.results import (
        Evidence,
        IterationResult,
        IterationState,
        StepResult,
        StepStatus,
    )
    from northstar.run.repeat import RepeatOptions, RepeatSummary, repeat_program
    from northstar.run.runner import ProgramRunner

_HOMES = {
    "ActionRecord": "northstar.monitor.fingerprints",
    "BehaviorMonitor": "northstar.monitor.behavior",
    "BoundStep": "northstar.plan.model",
    "BoundTab": "northstar.plan.model",
    "CompiledRecipe": "northstar.plan.compiler",
    "Evidence": "northstar.results",
    "IterationResult": "northstar.results",
    "IterationState": "northstar.results",
    "LoopSignal": "northstar.monitor.behavior",
    "MonitorSettings": "northstar.monitor.behavior",
    "NorthstarError": "northstar.errors",
    "Observation": "northstar.monitor.observation",
    "Plan": "northstar.plan.model",
    "ProgramIterationNotVerified": "northstar.errors",
    "ProgramRunner": "northstar.run.runner",
    "Recipe": "northstar.recipe.model",
    "RepeatOptions": "northstar.run.repeat",
    "RepeatSummary": "northstar.run.repeat",
    "ScreenChange": "northstar.monitor.screen_change",
    "StepResult": "northstar.results",
    "StepStatus": "northstar.results",
    "bind": "northstar.plan.compiler",
    "compile_recipe": "northstar.plan.compiler",
    "load_recipe": "northstar.recipe.loader",
    "parse_recipe": "northstar.recipe.loader",
    "prepare": "northstar.plan.compiler",
    "repeat_program": "northstar.run.repeat",
    "screen_change": "northstar.monitor.screen_change",
}

__all__ = [
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
    "ScreenChange",
    "StepResult",
    "StepStatus",
    "bind",
    "compile_recipe",
    "load_recipe",
    "parse_recipe",
    "prepare",
    "repeat_program",
    "screen_change",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())
