"""Keep secret values out of everything Northstar writes: logs, journal, errors, reports."""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["REDACTED", "redact"]

REDACTED = "[redacted]"


def redact(text: str, secrets: Collection[str]) -> str:
    """``text`` with every secret value replaced; longest first so overlaps cannot leak."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text
