"""The template syntax: ``{{ name }}`` substitution and nothing else.

Templates never execute code: there are no expressions, filters or attribute access, only
names looked up in a mapping. An unknown name is an error naming the template, never an
empty string. A template is parsed once (cached) and rendered per iteration.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

__all__ = ["TemplateError", "parse_template", "render", "template_names"]

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
    if "{{" not in template and "}}" not in template:
        return template
    out: list[str] = []
    for part in parse_template(template):
        if isinstance(part, str):
            out.append(part)
            continue
        if part[0] not in values:
            known = ", ".join(sorted(values)) or "none"
            raise TemplateError(f"unknown name {{{{ {part[0]} }}}} (known: {known})")
        out.append(_as_text(values[part[0]]))
    return "".join(out)


def _as_text(value: object) -> str:
    # An optional parameter left unset is "no text", never the word "None".
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
