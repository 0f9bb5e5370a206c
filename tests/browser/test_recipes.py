"""The example recipes in ``recipes/`` run verified against the fixture site.

They are read from their files as the CLI reads them (a file default is found next to the
recipe), and their effects are checked on the server, not only on the page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable

import pytest

from fixtures.site_server import FixtureSite
from northstar.composition import load_compiled
from northstar.results import IterationResult
from tests.browser.conftest import serialized
from tests.conftest import RECIPES

pytestmark = pytest.mark.browser

RunFile = Callable[..., Awaitable[IterationResult]]

EXAMPLES = sorted(p.name for p in RECIPES.glob("*.yaml"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_recipe_is_valid_and_explains_its_steps(name: str) -> None:
    compiled = load_compiled(RECIPES / name)
    assert compiled.recipe.description
    assert compiled.recipe.name == name.removesuffix(".yaml")


def test_every_feature_has_an_example() -> None:
    assert set(EXAMPLES) >= {
        "contact-form.yaml",
        "login.yaml",
        "paginate.yaml",
        "popup-chooser.yaml",
        "iframe-payment.yaml",
        "delayed-report.yaml",
        "publish-post.yaml",
    }


async def test_contact_form(run_file: RunFile, site: FixtureSite) -> None:
    result = await run_file("contact-form.yaml", {"name": "Ada", "topic": "sales"})
    assert result.verified, result.reason
    (sent,) = site.submissions()
    assert (sent["kind"], sent["name"], sent["topic"]) == ("contact", "Ada", "sales")
    notes = (RECIPES / "files" / "notes.txt").read_bytes()
    assert sent["attachment_sha256"] == hashlib.sha256(notes).hexdigest()
    assert result.outputs["message_id"] == sent["id"]


async def test_login_with_secret_password(run_file: RunFile) -> None:
    result = await run_file("login.yaml", {"password": "demo-password"})
    assert result.verified, result.reason
    assert result.outputs["signed_in_as"] == "demo"
    assert "demo-password" not in serialized(result)


async def test_paginate(run_file: RunFile) -> None:
    result = await run_file("paginate.yaml", {"item": "Item 14"})
    assert result.verified, result.reason
    assert result.outputs["item_number"] == "14"
    assert result.outputs["page_url"].endswith("/items?page=3")


async def test_popup_chooser(run_file: RunFile, site: FixtureSite) -> None:
    result = await run_file("popup-chooser.yaml", {"colour": "Blue"})
    assert result.verified, result.reason
    assert result.outputs["chosen"] == "Blue"
    assert [(s["kind"], s["colour"]) for s in site.submissions()] == [("popup", "blue")]


async def test_iframe_payment(run_file: RunFile, site: FixtureSite) -> None:
    result = await run_file("iframe-payment.yaml", {"holder": "Grace Hopper"})
    assert result.verified, result.reason
    assert result.outputs["receipt"] == "Payment accepted for Grace Hopper"
    assert [(s["kind"], s["holder"]) for s in site.submissions()] == [("payment", "Grace Hopper")]


async def test_delayed_report(run_file: RunFile) -> None:
    result = await run_file("delayed-report.yaml", {"delay_ms": 700})
    assert result.verified, result.reason
    assert result.outputs["report_status"] == "Report ready"


async def test_publish_post(run_file: RunFile, site: FixtureSite) -> None:
    result = await run_file("publish-post.yaml", {"title": "Release notes 1.0"})
    assert result.verified, result.reason
    assert site.submission_count("post") == 1
    assert result.outputs["post_number"] == "1"
    assert result.outputs["post_url"].endswith("/posts/1")
