"""A session's tab roles, from what the agent asked for to the ``BoundTab``s the host guards.

``open_session(tabs={"shop": {"start": URL, "origins": [URL, ...]}})``: each role opens at
its absolute ``start`` URL and may visit only its ``origins`` (scheme, host and port;
default: the start URL's origin), exactly as a recipe's tab role. The adapter's origin
guard enforces them on every navigation, link and redirect (``ORIGIN_BLOCKED``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from northstar.errors import UsageInvalid
from northstar.fences import shown_page_url
from northstar.plan.model import BoundTab

__all__ = ["MAX_TABS", "TabSpec", "bind_session_tabs"]

MAX_TABS = 8
_ROLE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")
_FIX = (
    'Pass tabs as {"role": {"start": "http://host/path", "origins": ["http://host"]}}, '
    "with absolute http(s) URLs."
)


class TabSpec(BaseModel):
    """One role as the agent describes it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: str
    origins: list[str] = Field(default_factory=list, max_length=32)


def _origin(url: str, what: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        shown = shown_page_url(url)  # a data: URL is its content: not repeated
        raise UsageInvalid(f"{what} {shown!r} is not an absolute http(s) URL", fix=_FIX)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _bind(role: str, raw: Any) -> BoundTab:
    if not isinstance(role, str) or not _ROLE.fullmatch(role):
        raise UsageInvalid(
            f"tab role {role!r}: use a letter, then letters, digits, - or _", fix=_FIX
        )
    try:
        spec = TabSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "tab"
        raise UsageInvalid(f"tab {role!r}: {where}: {first['msg']}", fix=_FIX) from None
    start_origin = _origin(spec.start, f"tab {role!r} start")
    origins = tuple(dict.fromkeys(_origin(o, f"tab {role!r} origin") for o in spec.origins))
    origins = origins or (start_origin,)
    if start_origin not in origins:
        raise UsageInvalid(f"tab {role!r}: its start URL is outside its own origins", fix=_FIX)
    return BoundTab(role=role, start=spec.start, opened_by=None, origins=origins)


def bind_session_tabs(tabs: Mapping[str, Any]) -> dict[str, BoundTab]:
    """Every role checked and bound; ``USAGE_INVALID`` names the first problem."""
    if not isinstance(tabs, Mapping) or not 1 <= len(tabs) <= MAX_TABS:
        raise UsageInvalid(f"a session needs 1 to {MAX_TABS} tab roles", fix=_FIX)
    return {role: _bind(role, raw) for role, raw in tabs.items()}
