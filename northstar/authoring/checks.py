"""``expect(...)`` assertions as recipe checks: pure, one assertion at a time.

``to_be_visible`` (``not_to_be_visible``/``to_be_hidden``: ``hidden``), ``to_have_text``
(``equals``), ``to_contain_text`` (``contains``), ``to_have_value``, ``to_be_checked``
(``checked=False`` and ``not_to_be_checked``: unchecked), ``to_have_count``,
``to_have_url`` and ``to_have_title``. Other assertions, negations and regular
expressions where the recipe needs text are ``Unsupported`` (kept as comments).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from northstar.authoring._urls import SiteUrls
from northstar.authoring.script import Link
from northstar.authoring.targets import Unsupported, locate

__all__ = ["Expectation", "expectation"]


@dataclass(frozen=True, slots=True)
class Expectation:
    """A check (YAML data), a few words for a step id, notes, and the URL it names if any."""

    check: dict[str, Any]
    label: str
    notes: tuple[str, ...] = ()
    url: str | None = None


def expectation(subject: Sequence[Link], assertion: Link, urls: SiteUrls) -> Expectation:
    """The check for ``expect(subject).assertion(...)``."""
    if not assertion.called:
        raise Unsupported("an assertion that is not called")
    if not subject:
        return _page_expectation(assertion, urls)
    located = locate(subject)
    target = located.target
    name, args = assertion.name, assertion.args
    check = _element_check(name, args, assertion, target)
    return Expectation(check, f"{name.removeprefix('to_')} {located.field}", located.notes)


def _element_check(
    name: str, args: tuple[Any, ...], link: Link, target: dict[str, Any]
) -> dict[str, Any]:
    if name == "to_be_visible" and not args and link.kwarg("visible", True) is True:
        return {"visible": target}
    if name in ("not_to_be_visible", "to_be_hidden") and not args:
        return {"hidden": target}
    if name in ("to_be_checked", "not_to_be_checked") and not args:
        checked = link.kwarg("checked", True) is not False and name == "to_be_checked"
        return {"checked": {"target": target, "checked": checked}}
    if name == "to_have_count" and len(args) == 1 and isinstance(args[0], int):
        return {"count": {"target": target, "equals": args[0]}}
    text = _one_text(name, args)
    if name == "to_have_text":
        return {"text": {"target": target, "equals": text}}
    if name == "to_contain_text":
        return {"text": {"target": target, "contains": text}}
    if name == "to_have_value":
        return {"value": {"target": target, "equals": text}}
    raise Unsupported(f"no recipe check for `{name}`")


def _page_expectation(assertion: Link, urls: SiteUrls) -> Expectation:
    if assertion.name == "to_have_url" and len(assertion.args) == 1:
        url = assertion.args[0]
        return Expectation(urls.url_check(url), "url", url=url if isinstance(url, str) else None)
    if assertion.name == "to_have_title":
        text = _one_text(assertion.name, assertion.args)
        return Expectation({"title": {"equals": text}}, "title")
    raise Unsupported(f"no recipe check for a tab's `{assertion.name}`")


def _one_text(name: str, args: tuple[Any, ...]) -> str:
    if len(args) != 1 or not isinstance(args[0], str):
        raise Unsupported(f"`{name}` with something other than one text (a list, a regex)")
    return args[0]
