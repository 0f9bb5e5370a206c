"""The pieces of a draft recipe: steps with their comments, and the parameters typed values become.

A typed value is a parameter named after its field (``Email`` -> ``email``), with the
value as its default so the recipe runs as recorded; the same field typed again with
another value gets ``email_2``. A password field's value is a ``secret`` parameter with no
default: the value is kept here only to be replaced by ``{{ name }}`` wherever the script
repeats it (an expectation, a comment), never to be written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DraftStep", "Param", "ParamBook", "plain_name", "step_id"]

_RESERVED = frozenset({"base_url", "iteration"})
_MIN_LIFTED = 3  # shorter typed values are too likely to occur by chance in other text
_MAX_NAME = 40

Param = dict[str, Any]


@dataclass
class DraftStep:
    """A step's YAML data, the comments written above it, and what it means for submissions."""

    body: dict[str, Any]
    line: int
    comments: list[str] = field(default_factory=list)
    typed: bool = False
    navigates: bool = False
    click_name: str = ""


def plain_name(text: str) -> str:
    """A parameter name from a field's words: letters, digits and ``_``."""
    name = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:_MAX_NAME].strip("_")
    if not name:
        return "value"
    if name[0].isdigit():
        name = f"v_{name}"
    return f"{name}_value" if name in _RESERVED else name


def step_id(label: str, taken: Collection[str]) -> str:
    """``fill Email`` -> ``fill-email``; ``-2``, ``-3`` for repeats."""
    base = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:48].strip("-") or "step"
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base}-{number}"
    return candidate


class ParamBook:
    """The parameters of the draft, in the order their values were typed."""

    def __init__(self) -> None:
        self.params: dict[str, Param] = {}
        self._values: dict[str, tuple[str, bool]] = {}  # name -> (typed value, secret)

    def typed(self, field_name: str, value: str, *, secret: bool) -> str:
        """The parameter for ``value`` typed into ``field_name`` (new, or the same one again)."""
        base = plain_name(field_name)
        name, number = base, 1
        while name in self._values and self._values[name] != (value, secret):
            number += 1
            name = f"{base}_{number}"
        if name not in self._values:
            self._values[name] = (value, secret)
            self.params[name] = (
                {"type": "string", "secret": True, "required": True}
                if secret
                else {"type": "string", "default": value}
            )
        return name

    @property
    def secret_values(self) -> list[str]:
        return [value for value, secret in self._values.values() if secret and value]

    def lifter(self) -> Callable[[str], str]:
        """Text with typed values (longest first) replaced by their ``{{ parameter }}``."""
        pairs = [
            (value, name)
            for name, (value, secret) in self._values.items()
            if value and (secret or len(value) >= _MIN_LIFTED)
        ]
        return _replacer(pairs)

    def secret_lifter(self) -> Callable[[str], str]:
        """Text with only the secret values replaced (for comments quoting the script)."""
        pairs = [(v, n) for n, (v, secret) in self._values.items() if secret and v]
        return _replacer(pairs)


def _replacer(pairs: list[tuple[str, str]]) -> Callable[[str], str]:
    pairs.sort(key=lambda pair: -len(pair[0]))
    if not pairs:
        return lambda text: text
    by_value = dict(pairs)
    pattern = re.compile("|".join(re.escape(value) for value, _ in pairs))
    return lambda text: pattern.sub(lambda m: "{{ " + by_value[m.group(0)] + " }}", text)
