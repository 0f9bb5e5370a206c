"""A plan: one iteration's recipe with every template rendered, immutable.

The runner and the browser adapter only ever see a ``Plan``; they never render templates
or look at raw parameters. Secret values travel in ``secrets`` so that every writer
(logs, journal, errors) can redact them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from northstar.recipe.model import Check, Output, Recipe, RetryPolicy, Step

__all__ = ["BoundStep", "BoundTab", "CompiledRecipe", "Plan"]


@dataclass(frozen=True, slots=True)
class BoundTab:
    """A tab role with its absolute destination and normalized allowed origins."""

    role: str
    start: str | None
    opened_by: str | None
    origins: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BoundStep:
    """One rendered step and the settings it runs with."""

    index: int
    step: Step
    timeout_ms: int
    retry: RetryPolicy  # resolved when the plan is rendered: step, recipe, then the default
    opens_tab: str | None = None
    input_fingerprint: str = ""
    line: int | None = None  # where the step starts in the recipe file, when known

    @property
    def id(self) -> str:
        return self.step.id

    @property
    def tab(self) -> str:
        return self.step.tab

    @property
    def kind(self) -> str:
        return self.step.kind

    @property
    def is_submit(self) -> bool:
        return self.step.effect == "submit"

    @property
    def is_passive(self) -> bool:
        return self.step.is_passive


@dataclass(frozen=True, slots=True)
class Plan:
    """An immutable, rendered iteration of a recipe bound to its definition hash."""

    recipe_name: str
    recipe_version: int
    definition_hash: str
    iteration: int
    tabs: Mapping[str, BoundTab] = field(repr=False)
    steps: tuple[BoundStep, ...] = field(repr=False)
    outputs: tuple[tuple[str, Output], ...] = field(repr=False)
    done_when: tuple[Check, ...] = field(repr=False)
    default_timeout_ms: int
    params_fingerprint: str
    secrets: frozenset[str] = field(default=frozenset(), repr=False)
    files: tuple[tuple[str, str], ...] = ()
    param_values: Mapping[str, Any] = field(default_factory=dict, repr=False)
    recipe_file: str = ""  # the recipe's path as given (``<recipe>`` for text), for people
    # The same values as text with each secret ``[redacted]``: what the journal keeps as the row.
    row_values: Mapping[str, str] = field(default_factory=dict, repr=False)
    # The folders an upload may come from (``northstar.fences.allowed_upload``): the
    # recipe's, then those the user named; none for a session that named none.
    upload_roots: tuple[str, ...] = ()
    # An agent's session: a popup no step declares becomes a tab of its own (``popup-N``,
    # guarded by its opener's origins from its first request) instead of being closed.
    adopt_popups: bool = False

    def step(self, step_id: str) -> BoundStep:
        return next(s for s in self.steps if s.id == step_id)


@dataclass(frozen=True)
class CompiledRecipe:
    """A recipe that passed every check that does not need parameter values."""

    recipe: Recipe
    recipe_hash: str
    source: str
    uses_base_url: bool
    # Folders the user named (``--files-dir``) that its files may come from, besides its own.
    files_dirs: tuple[str, ...] = ()
    # The line in ``source`` where each step starts (``--step`` shows it, a trace's step
    # groups point at it); empty for a recipe that came from text with no positions.
    step_lines: tuple[int, ...] = ()
