"""Playwright locator chains as recipe targets: pure, over the links ``script`` read.

- ``get_by_role/label/placeholder/text/test_id`` become the target of that kind; ``name``
  and ``exact`` are kept. Without ``exact`` Playwright matches a substring, but the name
  or label codegen writes is the element's whole name, so the recipe's stricter default
  (the whole name, case-sensitive) is kept; an explicit ``exact=False`` stays loose. Text
  is the exception: codegen cuts a long text to its first words (``get_by_text("Sign in
  Username Password")`` for a whole form), so ``get_by_text`` without ``exact=True`` stays
  a substring (``exact: false``), as it was recorded.
- ``get_by_alt_text("Logo")`` becomes ``{role: img, name: Logo}`` (an image's accessible
  name is its alt text); ``get_by_title`` and ``locator("css")`` become a ``css`` target,
  flagged for review (``# lint: css target``): CSS is the recipe format's last resort.
- A chain (``a.get_by_...().get_by_...()``) nests: each earlier link is the ``within``
  scope of the next. ``.filter(has_text=T)`` narrows a scope to the element holding the
  text ``T`` (a substring, as Playwright's filter is). ``frame_locator(S)`` and
  ``locator(S).content_frame`` set the target's ``frame``.
- ``.first``, ``.last`` and ``.nth(i)`` have no recipe equivalent (a target must match
  exactly one element): the target is kept without them and the pick is flagged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from northstar.authoring.script import Link, Regex

__all__ = ["Located", "Unsupported", "is_secret_field", "locate"]

_SECRET_NAME = re.compile(r"pass(word|code|phrase)?\b|\bpin\b|secret", re.IGNORECASE)
_SECRET_CSS = re.compile(r"type\s*=\s*['\"]?password", re.IGNORECASE)
_BY_KIND = {
    "get_by_label": "label",
    "get_by_placeholder": "placeholder",
    "get_by_text": "text",
    "get_by_test_id": "test_id",
}
CSS_NOTE = "lint: css target"


class Unsupported(ValueError):
    """A locator the recipe format cannot say; the statement is kept as a comment."""


@dataclass(frozen=True, slots=True)
class Located:
    """A recipe target (as YAML data), the notes to write beside it, and its field name."""

    target: dict[str, Any]
    notes: tuple[str, ...]
    field: str
    secret: bool


def locate(links: Sequence[Link]) -> Located:
    """The target of a locator chain (the links after the page variable)."""
    scopes: list[dict[str, Any]] = []
    notes: list[str] = []
    frame: str | None = None
    for link in links:
        frame = _step(link, scopes, notes, frame)
    if not scopes:
        raise Unsupported("no element is named")
    target = _nest(scopes)
    if frame is not None:
        target["frame"] = frame
    return Located(target, tuple(notes), _field_name(scopes[-1]), is_secret_field(scopes[-1]))


def _step(
    link: Link, scopes: list[dict[str, Any]], notes: list[str], frame: str | None
) -> str | None:
    """Apply one link; returns the frame selector in force after it."""
    if link.name == "frame_locator" and link.called and not scopes:
        return str(_text_arg(link))
    if link.name == "content_frame" and scopes and "css" in scopes[-1] and len(scopes) == 1:
        selector = str(scopes.pop()["css"])
        notes.remove(CSS_NOTE)
        return selector
    if (link.name in ("first", "last") and not link.called) or link.name == "nth":
        pick = f".nth({link.args[0]})" if link.name == "nth" and link.args else f".{link.name}"
        notes.append(
            f"lint: codegen picked {pick} of several matches; a target must match exactly "
            "one element (else TARGET_AMBIGUOUS): narrow it with `within`"
        )
        return frame
    if link.name == "filter" and scopes:
        scopes[-1] = _filtered(link, notes)
        return frame
    scopes.append(_single(link, notes))
    return frame


def _single(link: Link, notes: list[str]) -> dict[str, Any]:
    if not link.called:
        raise Unsupported(f"`.{link.name}` is not a locator")
    if link.name == "get_by_role":
        return _by_role(link)
    if link.name in _BY_KIND:
        _only(link, "exact")
        target = _exact({_BY_KIND[link.name]: _text_arg(link)}, link)
        if link.name == "get_by_text" and link.kwarg("exact") is not True:
            target["exact"] = False
        return target
    if link.name == "get_by_alt_text":
        _only(link, "exact")
        notes.append("codegen: get_by_alt_text as the image's accessible name")
        return _exact({"role": "img", "name": _text_arg(link)}, link)
    if link.name == "get_by_title":
        _only(link, "exact")
        notes.append(CSS_NOTE)
        return {"css": f"[title={_css_string(_text_arg(link))}]"}
    if link.name == "locator" and len(link.args) == 1 and not link.kwargs:
        notes.append(CSS_NOTE)
        return {"css": _text_arg(link)}
    raise Unsupported(f"no recipe target for `.{link.name}(...)` with these arguments")


def _by_role(link: Link) -> dict[str, Any]:
    _only(link, "name", "exact")
    if len(link.args) != 1 or not isinstance(link.args[0], str):
        raise Unsupported("get_by_role needs one role name")
    target: dict[str, Any] = {"role": link.args[0]}
    name = link.kwarg("name")
    if isinstance(name, Regex):
        raise Unsupported("a name given as a regular expression")
    if name is not None:
        target["name"] = str(name)
        _exact(target, link)
    return target


def _filtered(link: Link, notes: list[str]) -> dict[str, Any]:
    _only(link, "has_text")
    text = link.kwarg("has_text")
    if not isinstance(text, str):
        raise Unsupported('filter() other than has_text="..."')
    notes.append(f"codegen: .filter(has_text={text!r}) as the element holding that text")
    return {"text": text, "exact": False}


def _nest(scopes: list[dict[str, Any]]) -> dict[str, Any]:
    target = dict(scopes[-1])
    if len(scopes) > 1:
        target["within"] = _nest(scopes[:-1])
    return target


def _exact(target: dict[str, Any], link: Link) -> dict[str, Any]:
    if link.kwarg("exact") is False:
        target["exact"] = False
    return target


def _only(link: Link, *allowed: str) -> None:
    extra = [key for key, _ in link.kwargs if key not in allowed]
    if extra:
        raise Unsupported(f"`{link.name}` with {', '.join(extra)}")


def _text_arg(link: Link) -> str:
    if len(link.args) != 1 or not isinstance(link.args[0], str):
        raise Unsupported(f"`{link.name}` needs one text argument (not a regular expression)")
    return link.args[0]


def _css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _field_name(target: dict[str, Any]) -> str:
    """The words a person would call this element (for parameter and step names)."""
    for key in ("label", "name", "placeholder", "test_id", "text"):
        if isinstance(target.get(key), str):
            return str(target[key])
    css = str(target.get("css", ""))
    found = re.search(r"#([\w-]+)|name\s*=\s*['\"]?([\w-]+)|title=\"([^\"]+)\"", css)
    if found:
        return next(group for group in found.groups() if group)
    return str(target.get("role") or css[:30] or "field")


def is_secret_field(target: dict[str, Any]) -> bool:
    """A password field: its label, name or placeholder says so, or its CSS asks for one."""
    css = target.get("css")
    if isinstance(css, str):
        return bool(_SECRET_CSS.search(css) or _SECRET_NAME.search(_field_name(target)))
    role = target.get("role")
    if role not in (None, "textbox"):
        return False
    words = [target.get(key) for key in ("label", "name", "placeholder")]
    return any(isinstance(w, str) and _SECRET_NAME.search(w) for w in words)
