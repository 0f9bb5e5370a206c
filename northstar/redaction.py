"""Keep secret values out of everything Northstar writes: logs, journal, errors, reports.

A secret reaches text in more forms than its raw one: percent-encoded in a URL (``quote``
or ``quote_plus``, upper or lower case hex, ``%20`` or ``+`` for a space), HTML-escaped
in a page, JSON-escaped in a stored document, or as Python's ``repr`` in a message. This
module is the one place that knows those forms: ``redact`` replaces the secret in every
one of them, and in any mix of them (a browser encodes a query differently from Python),
because each character of the secret may appear as itself or as any of its escapes.

Every writer goes through it: the adapter's evidence and errors, the journal, the logs,
the CLI's output, the report (which reads the scrubbed journal), and recorded cases.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from functools import lru_cache
from typing import Any

__all__ = ["REDACTED", "contains_secret", "redact", "redact_data", "secret_pattern"]

REDACTED = "[redacted]"

# Escapes of one character in JSON and in Python's repr (a backslash and a letter).
_SHORT_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "'": "\\'",
    "/": "\\/",
    "\t": "\\t",
    "\n": "\\n",
    "\r": "\\r",
    "\b": "\\b",
    "\f": "\\f",
}
_HTML_NAMES = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos"}


def redact(text: str, secrets: Collection[str]) -> str:
    """``text`` with every form of every secret replaced by ``[redacted]``."""
    pattern = secret_pattern(secrets)
    return text if pattern is None else pattern.sub(REDACTED, text)


def contains_secret(text: str, secrets: Collection[str]) -> bool:
    """Whether any form of any secret is in ``text`` (the last guard before a file stays)."""
    pattern = secret_pattern(secrets)
    return pattern is not None and pattern.search(text) is not None


def redact_data(value: Any, secrets: Collection[str]) -> Any:
    """``value`` (JSON-like: strings, mappings, lists) with every string redacted."""
    if not secrets:
        return value
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {str(key): redact_data(item, secrets) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(item, secrets) for item in value]
    return value


def secret_pattern(secrets: Collection[str]) -> re.Pattern[str] | None:
    """One pattern matching every form of the non-empty secrets, longest first."""
    ordered = tuple(sorted({s for s in secrets if s}, key=lambda s: (-len(s), s)))
    return _compiled(ordered) if ordered else None


@lru_cache(maxsize=256)
def _compiled(secrets: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(_any_form(secret) for secret in secrets))


def _any_form(secret: str) -> str:
    """A regex for ``secret`` with each character in any of its forms."""
    return "".join(_char_forms(char) for char in secret)


def _char_forms(char: str) -> str:
    """A group of the ways one character is written: escapes first, then itself."""
    code = ord(char)
    forms = ["".join(f"%{_hex(byte, 2)}" for byte in char.encode("utf-8"))]  # URL
    if char == " ":
        forms.append(r"\+")  # quote_plus and HTML forms
    forms.append(f"&#0*{code};")  # HTML, decimal
    forms.append(f"&#[xX]0*{_hex(code, 1)};")  # HTML, hexadecimal
    if char in _HTML_NAMES:
        forms.append(f"&{_HTML_NAMES[char]};")
    if char in _SHORT_ESCAPES:
        forms.append(re.escape(_SHORT_ESCAPES[char]))
    forms.extend(_code_escapes(code))
    forms.append(re.escape(char))
    return "(?:" + "|".join(forms) + ")"


def _code_escapes(code: int) -> list[str]:
    """``\\xNN``, ``\\uNNNN`` and ``\\UNNNNNNNN`` (JSON and repr), with JSON's surrogates."""
    forms = [rf"\\x{_hex(code, 2)}"] if code < 0x100 else []
    if code < 0x10000:
        forms.append(rf"\\u{_hex(code, 4)}")
    else:
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        forms.append(rf"\\u{_hex(high, 4)}\\u{_hex(low, 4)}")
        forms.append(rf"\\U{_hex(code, 8)}")
    return forms


def _hex(value: int, width: int) -> str:
    """``value`` in hex as a regex that accepts either case of each letter."""
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{value:0{width}x}")
