"""Northstar: run stored browser procedures (recipes) repeatedly, with proof of each run.

The core never imports Playwright; ``browser_adapters`` implements ``northstar.browser``.
Names are imported on first use (PEP 562), so importing one module (the journal readers,
the loader) does not load the whole core and a command starts quickly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from northstar._lazy import lazy_exports

if TYPE_CHECKING:
    from northstar.compiler import CompiledRecipe, bind, compile_recipe, prepare
    from northstar.errors import NorthstarError, ProgramIterationNotVerified
    from northstar.fingerprints import ActionRecord
    from northstar.loader import load_recipe, parse_recipe
    from northstar.monitor import BehaviorMonitor, LoopSignal, MonitorSettings
    from northstar.observation import Observation
    from northstar.plan import BoundStep, BoundTab, Plan
    from northstar.recipe import Recipe
    from northstar.repeat import RepeatOptions, RepeatSummary, repeat_program
    from northstar.results import (
        Evidence,
        IterationResult,
        IterationState,
        StepResult,
        StepStatus,
    )
    from northstar.runner import ProgramRunner
    from northstar.screen_change import ScreenChange, screen_change

_HOMES = {
    "ActionRecord": "northstar.fingerprints",
    "BehaviorMonitor": "northstar.monitor",
    "BoundStep": "northstar.plan",
    "BoundTab": "northstar.plan",
    "CompiledRecipe": "northstar.compiler",
    "Evidence": "northstar.results",
    "IterationResult": "northstar.results",
    "IterationState": "northstar.results",
    "LoopSignal": "northstar.monitor",
    "MonitorSettings": "northstar.monitor",
    "NorthstarError": "northstar.errors",
    "Observation": "northstar.observation",
    "Plan": "northstar.plan",
    "ProgramIterationNotVerified": "northstar.errors",
    "ProgramRunner": "northstar.runner",
    "Recipe": "northstar.recipe",
    "RepeatOptions": "northstar.repeat",
    "RepeatSummary": "northstar.repeat",
    "ScreenChange": "northstar.screen_change",
    "StepResult": "northstar.results",
    "StepStatus": "northstar.results",
    "bind": "northstar.compiler",
    "compile_recipe": "northstar.compiler",
    "load_recipe": "northstar.loader",
    "parse_recipe": "northstar.loader",
    "prepare": "northstar.compiler",
    "repeat_program": "northstar.repeat",
    "screen_change": "northstar.screen_change",
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
