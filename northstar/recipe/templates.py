"""The template syntax: ``{{ name }}`` substitution and nothing else.

Templates never execute code: there are no expressions, filters or attribute access, only
names looked up in a mapping. An unknown name is an error naming the template, never an
empty string. A template is parsed once (cached) and rendered per iteration.

In a URL (a tab's ``start``, a ``goto``, a ``url`` expectation), a value placed after the
URL's ``?`` is a query value, not URL syntax: ``render_url`` percent-encodes it, so
``/posts?q={{ title }}`` with the title "Fish & chips #1" asks for that title rather
than for ``q=Fish`` and a stray ``chips`` parameter. A value before the ``?`` goes in as
written: it is the URL's base or part of its path (``{{ base_url }}{{ page }}`` with the
page ``/items?page=2``), and the browser encodes what a path cannot hold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from urllib.parse import quote

__all__ = ["TemplateError", "parse_template", "render", "render_url", "template_names"]

_PLACEHOLDER = re.compile(r"\{\{\s*(.*?)\s*\}\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class TemplateError(ValueError):
    """A template is malformed or names something unknown (converted by the compiler)."""


@lru_cache(maxsize=4096)
def parse_template(template: str) -> tuple[str | tuple[str], ...]:
    """Split into literal strings and 1-tuples holding a name to substitute."""
    parts: list[str | tuple[str]] = []
    pos = 0
    for match in _PLACEHOLDER.finditer(template):
        name = match.group(1)
        if not _NAME.match(name):
            raise TemplateError(
                f"{{{{ {name} }}}} is not a plain name; templates substitute names only"
            )
        parts.append(template[pos : match.start()])
        parts.append((name,))
        pos = match.end()
    parts.append(template[pos:])
    if any("{{" in p or "}}" in p for p in parts if isinstance(p, str)):
        raise TemplateError(f"unbalanced braces in template {template!r}")
    return tuple(p for p in parts if p != "")


def template_names(template: str) -> set[str]:
    """The names a template refers to."""
    return {p[0] for p in parse_template(template) if isinstance(p, tuple)}


def render(template: str, values: Mapping[str, object]) -> str:
    """Substitute every ``{{ name }}``; an unknown name raises ``TemplateError``."""
    return _substitute(template, values, encode=False)


def render_url(template: str, values: Mapping[str, object]) -> str:
    """``render`` for a URL: a value after the template's first ``?`` is percent-encoded."""
    return _substitute(template, values, encode=True)


def _substitute(template: str, values: Mapping[str, object], *, encode: bool) -> str:
    if "{{" not in template and "}}" not in template:
        return template
    out: list[str] = []
    in_query = False
    for part in parse_template(template):
        if isinstance(part, str):
            out.append(part)
            in_query = in_query or "?" in part
            continue
        if part[0] not in values:
            known = ", ".join(sorted(values)) or "none"
            raise TemplateError(f"unknown name {{{{ {part[0]} }}}} (known: {known})")
        text = _as_text(values[part[0]])
        out.append(quote(text, safe="") if encode and in_query else text)
    return "".join(out)


def _as_text(value: object) -> str:
    # An optional parameter left unset is "no text", never the word "None".
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
