"""Northstar: run stored browser procedures (recipes) repeatedly, with proof of each run.

The core never imports Playwright; ``browser_adapters`` implements ``northstar.browser``.
Names are imported on first use (PEP 562), so importing one module (the journal readers,
the loader) does not load the whole core and a command starts quickly.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from northstar._lazy import lazy_exports

if TYPE_CHECKING:
    from northstar.api import RunResult, load, run, run_sync
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
    "RunResult": "northstar.api",
    "Recipe": "northstar.recipe.model",
    "RepeatOptions": "northstar.run.repeat",
    "RepeatSummary": "northstar.run.repeat",
    "ScreenChange": "northstar.monitor.screen_change",
    "StepResult": "northstar.results",
    "StepStatus": "northstar.results",
    "bind": "northstar.plan.compiler",
    "compile_recipe": "northstar.plan.compiler",
    "load": "northstar.api",
    "load_recipe": "northstar.recipe.loader",
    "parse_recipe": "northstar.recipe.loader",
    "prepare": "northstar.plan.compiler",
    "repeat_program": "northstar.run.repeat",
    "run_sync": "northstar.api",
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
    "RunResult",
    "ScreenChange",
    "StepResult",
    "StepStatus",
    "bind",
    "compile_recipe",
    "load",
    "load_recipe",
    "parse_recipe",
    "prepare",
    "repeat_program",
    "run",
    "run_sync",
    "screen_change",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())


class _Package(ModuleType):
    """``northstar.run`` is the API's ``run``, though ``northstar/run/`` is a subpackage too.

    Importing a subpackage sets it as an attribute of its parent, which would replace the
    function with the module as soon as the run engine loads; this property keeps the
    function (the subpackage stays in ``sys.modules``, where imports find it).
    """

    @property
    def run(self) -> Any:
        return importlib.import_module("northstar.api").run

    @run.setter
    def run(self, subpackage: Any) -> None:
        pass  # the import system recording northstar/run/: it is reachable by import


sys.modules[__name__].__class__ = _Package
