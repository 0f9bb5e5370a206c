"""Walking a validated recipe: every target and every text value, each with its field path.

Paths are spelled as the loader spells them (``steps[3].click.target``, YAML keys such as
``from`` and ``as`` rather than Python names), so a finding's path finds its line and
column in the loader's position index.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from northstar.recipe.model import Target

__all__ = ["flow", "iter_fields", "iter_targets", "iter_texts", "iter_values", "origin_of"]

_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9 _./-]*")
_TEMPLATE_HEAD = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_URL_HEAD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^/?#]*)")


def iter_fields(model: BaseModel, path: str) -> Iterator[tuple[str, Any]]:
    """Each field that is set (not ``None``) as ``(path, value)``, named by its YAML key."""
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if value is not None:
            yield (f"{path}.{info.alias or name}" if path else info.alias or name), value


def _children(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, BaseModel):
        yield from iter_fields(value, path)
    elif isinstance(value, list):
        yield from ((f"{path}[{i}]", item) for i, item in enumerate(value))
    elif isinstance(value, dict):
        yield from ((f"{path}.{key}", item) for key, item in value.items())


def iter_values(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every value under ``value``, depth first, with its path."""
    for child_path, child in _children(value, path):
        yield child_path, child
        yield from iter_values(child, child_path)


def iter_targets(value: Any, path: str = "") -> Iterator[tuple[str, Target]]:
    """Every target (a ``within`` scope included) under ``value``."""
    for child_path, child in iter_values(value, path):
        if isinstance(child, Target):
            yield child_path, child


def iter_texts(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every text value under ``value``: where templates can be."""
    for child_path, child in iter_values(value, path):
        if isinstance(child, str):
            yield child_path, child


def origin_of(url: str) -> str | None:
    """The origin a URL template starts with: ``{{ base_url }}`` or ``https://host:port``.

    ``None`` for a path (``/posts``) or a glob (``**/posts``): it stays where it is.
    """
    template = _TEMPLATE_HEAD.match(url)
    if template:
        return "{{ " + template.group(1) + " }}"
    absolute = _URL_HEAD.match(url)
    return absolute.group(1).lower() if absolute else None


def flow(value: Any) -> str:
    """``value`` as one line of YAML flow style, as a person would write it in a recipe."""
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True, exclude_defaults=True, exclude_none=True)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {flow(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return text if _PLAIN.fullmatch(text) and text == text.strip() else json.dumps(text)
