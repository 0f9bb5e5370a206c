"""Keep secret values out of everything Northstar writes: logs, journal, errors, reports."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["REDACTED", "redact", "redact_mapping"]

REDACTED = "[redacted]"


def redact(text: str, secrets: Collection[str]) -> str:
    """``text`` with every secret value replaced; longest first so overlaps cannot leak."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def redact_mapping(values: Mapping[str, Any], secret_names: Collection[str]) -> dict[str, Any]:
    """A copy of parameter values with secret ones replaced by the marker."""
    return {k: (REDACTED if k in secret_names else v) for k, v in values.items()}
