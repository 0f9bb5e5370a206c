"""Write a draft as recipe YAML with comments: PyYAML for the data, comment lines between.

PyYAML does not keep comments, so each part (the header, each parameter, each tab, each
step) is dumped on its own and the comments are written as lines above it. The text is
plain recipe YAML: ``northstar validate`` and the loader read it like a hand-written one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import yaml

from northstar.authoring.convert import Draft
from northstar.authoring.steps import DraftStep

__all__ = ["emit_recipe"]

_STEP_ORDER = ("id", "tab", "description")
_LAST = ("effect", "expect")


def emit_recipe(draft: Draft, *, name: str, description: str, scrub: Callable[[str], str]) -> str:
    """The recipe text; ``scrub`` is applied to every comment (it replaces secret values)."""
    out = [f"# {scrub(description)}", "# Review the comments below before running it."]
    out += _dump({"name": name, "version": 1, "description": description})
    out += _section(
        "params",
        draft.params,
        {"secret": "# {name}: secret, never written: give it with -p {name}=... at run time"},
    )
    out += _section("tabs", draft.tabs, {})
    out.append("steps:")
    for step in draft.steps:
        out += [f"  # {scrub(_one_line(c))}" for c in dict.fromkeys(step.comments)]
        out += _indented(_dump([_ordered(step)], flow=True))
    out += [f"# {scrub(_one_line(c))}" for c in draft.trailing]
    return "\n".join(out) + "\n"


def _section(key: str, entries: dict[str, Any], notes: dict[str, str]) -> list[str]:
    if not entries:
        return []
    lines = [f"{key}:"]
    for entry, data in entries.items():
        if "secret" in notes and data.get("secret"):
            lines.append("  " + notes["secret"].format(name=entry))
        lines += _indented(_dump({entry: data}, flow=True))
    return lines


def _ordered(step: DraftStep) -> dict[str, Any]:
    body = step.body
    first = {k: body[k] for k in _STEP_ORDER if k in body}
    middle = {k: v for k, v in body.items() if k not in _STEP_ORDER and k not in _LAST}
    return {**first, **middle, **{k: body[k] for k in _LAST if k in body}}


def _dump(data: Any, *, flow: bool = False) -> list[str]:
    text = yaml.safe_dump(
        data,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=None if flow else False,
    )
    return text.rstrip("\n").split("\n")


def _indented(lines: Iterable[str]) -> list[str]:
    return ["  " + line for line in lines]


def _one_line(comment: str) -> str:
    return " ".join(comment.split())
