"""Helpers shared by the journal tests: a recipe with a secret, a stepping clock, a run."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from northstar.journal import Journal
from northstar.plan.compiler import compile_recipe
from northstar.plan.model import Plan
from northstar.recipe.loader import parse_recipe

RECIPE = """
name: journal-test
params:
  title: {type: string, required: true}
  password: {type: string, secret: true}
tabs:
  admin:
    start: http://127.0.0.1:8000/
steps:
  - id: open-form
    tab: admin
    goto: http://127.0.0.1:8000/form
  - id: fill-password
    tab: admin
    fill: {target: {label: Password}, value: "{{ password }}"}
  - id: publish
    tab: admin
    effect: submit
    click: {target: {role: button, name: "Publish {{ title }}"}}
    expect:
      - text: {target: {role: status}, contains: Published}
"""

SECRET = "hunter2-very-secret"


@dataclass
class StepClock:
    """A clock that moves one millisecond each time it is read."""

    now: datetime = field(default_factory=lambda: datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC))

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


def make_plan(iteration: int = 1, title: str = "Hello") -> Plan:
    recipe = parse_recipe(RECIPE)
    return compile_recipe(recipe, {"title": title, "password": SECRET}, iteration=iteration)


def create_run(journal: Journal, *, total: int = 2, fingerprint: str = "fp") -> tuple[str, str]:
    return journal.create_run(
        recipe_path="recipes/journal-test.yaml",
        recipe_name="journal-test",
        definition_hash="d" * 64,
        project="demo",
        profile="default",
        params_fingerprint=fingerprint,
        total_iterations=total,
        options={"interval": 0},
    )
