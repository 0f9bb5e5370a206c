"""The README's recipe examples load: every fenced ``yaml`` block that is a recipe, and the
inline ``retry: {...}`` policies it quotes, go through the loader and ``prepare``."""

from __future__ import annotations

import re

import pytest

from northstar.plan.compiler import prepare
from northstar.recipe.loader import parse_recipe
from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
FENCED_YAML = re.findall(r"^```yaml\n(.*?)^```", README, flags=re.MULTILINE | re.DOTALL)
RECIPES = [block for block in FENCED_YAML if re.search(r"^steps:", block, flags=re.MULTILINE)]
RETRY_POLICIES = re.findall(r"`(retry: \{[^`]*\})`", README)

MINIMAL = """\
name: readme-retry
{policy}
tabs:
  site: {{start: "http://127.0.0.1:9/"}}
steps:
  - {{id: open, tab: site, goto: /}}
"""


def test_the_readme_has_recipe_examples_and_retry_policies() -> None:
    assert RECIPES
    assert RETRY_POLICIES


@pytest.mark.parametrize("block", RECIPES, ids=lambda block: block.split("\n", 1)[0])
def test_each_recipe_block_loads_and_prepares(block: str) -> None:
    recipe = parse_recipe(block, source="README.md")
    prepare(recipe, source="README.md")


@pytest.mark.parametrize("policy", RETRY_POLICIES)
def test_each_quoted_retry_policy_loads(policy: str) -> None:
    recipe = parse_recipe(MINIMAL.format(policy=policy), source="README.md")
    assert recipe.retry is not None
    assert recipe.retry.on
