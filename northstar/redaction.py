"""Keep secret values out of everything Northstar writes: logs, journal, errors, reports.

A secret reaches text in more forms than its raw one: percent-encoded in a URL (``quote``
or ``quote_plus``, upper or lower case hex, ``%20`` or ``+`` for a space), HTML-escaped
in a page, JSON-escaped in a stored document, as Python's ``repr`` in a message, or
``re.escape``-d in a pattern a check shows. This module is the one place that knows those
forms: ``redact`` replaces the secret in every one of them, and in any mix of them (a
browser encodes a query differently from Python), because each character of the secret
may appear as itself or as any of its escapes.

The forms of one character are a few small patterns (``_char_forms``). A secret is found
by a ``SecretMatcher``: its first characters, in any of their forms, as one small regex
that finds where an occurrence may start; from there the rest is followed character by
character, comparing whole runs of plain text at once (every escape starts with one of
``% & \\ +``, so text between those can only be the secret's own characters). Nothing is
compiled per character of the secret, so a secret of a megabyte costs about as much as
reading it, not a regex of a million groups.

Every writer goes through it: the adapter's evidence and errors, the journal, the logs,
the CLI's output, the report (which reads the scrubbed journal), and recorded cases.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from functools import lru_cache
from typing import Any

__all__ = [
    "REDACTED",
    "SecretMatcher",
    "contains_secret",
    "redact",
    "redact_data",
    "secret_matcher",
]

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
# The characters ``re.escape`` puts a backslash before (Python 3.7 and later).
_REGEX_SPECIAL = frozenset("()[]{}?*+-|^$\\.&~# \t\n\r\v\f")
# Where an escape may start: every form but a character's raw self begins like one of these.
_ESCAPE_START = re.compile(r"\+|%[0-9A-Fa-f]{2}|&(?:#|[A-Za-z]{2,4};)|\\")
_ESCAPE_START_SPAN = 6  # the longest of those beginnings (``&quot;``)
_PERCENT_RUN = re.compile("(?:%[0-9A-Fa-f]{2})+")
_PREFIX = 8  # characters of a secret in its start pattern: enough to rule out most places


def redact(text: str, secrets: Collection[str]) -> str:
    """``text`` with every form of every secret replaced by ``[redacted]``."""
    matcher = secret_matcher(secrets)
    return text if matcher is None else matcher.sub(REDACTED, text)


def contains_secret(text: str, secrets: Collection[str]) -> bool:
    """Whether any form of any secret is in ``text`` (the last guard before a file stays)."""
    matcher = secret_matcher(secrets)
    return matcher is not None and matcher.search(text)


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


def secret_matcher(secrets: Collection[str]) -> SecretMatcher | None:
    """One matcher for every form of the non-empty secrets; ``None`` when there are none."""
    ordered = tuple(sorted({s for s in secrets if s}, key=lambda s: (-len(s), s)))
    return _matcher(ordered) if ordered else None


@lru_cache(maxsize=256)
def _matcher(secrets: tuple[str, ...]) -> SecretMatcher:
    return SecretMatcher(secrets)


class SecretMatcher:
    """Finds every form of some secrets in a text; built once per set of secrets."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._secrets = tuple((s, _start_pattern(s[:_PREFIX])) for s in secrets)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the secrets are in ``text``: sorted, overlapping ones merged."""
        found = sorted(span for s, start in self._secrets for span in _occurrences(text, s, start))
        merged: list[tuple[int, int]] = []
        for begin, end in found:
            if merged and begin < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((begin, end))
        return merged

    def sub(self, replacement: str, text: str) -> str:
        """``text`` with each place a secret is replaced by ``replacement``."""
        pieces: list[str] = []
        done = 0
        for begin, end in self.spans(text):
            pieces += (text[done:begin], replacement)
            done = end
        return "".join(pieces) + text[done:] if pieces else text

    def search(self, text: str) -> bool:
        """Whether any secret is anywhere in ``text``."""
        return any(next(_occurrences(text, s, start), None) for s, start in self._secrets)


def _occurrences(text: str, secret: str, start: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """Each ``(begin, end)`` of ``secret`` in ``text``, left to right, not overlapping."""
    position = 0
    while (candidate := start.search(text, position)) is not None:
        begin = candidate.start()
        end = _longest_match(text, secret, begin)
        if end < 0:
            position = begin + 1
            continue
        yield begin, end
        position = end


def _longest_match(text: str, secret: str, begin: int) -> int:
    """The end of the longest form of ``secret`` that starts at ``begin``; -1 if none does.

    A state is (place in the text, characters of the secret matched), reached by reading
    an escape; the raw text in between is compared a stretch at a time.
    """
    size, end = len(secret), -1
    pending, seen = [(begin, 0)], set()
    while pending:
        state = pending.pop()
        if state in seen:
            continue
        seen.add(state)
        position, matched = state
        if matched == size:
            end = max(end, position)
        elif position < len(text):
            pending += _next_states(text, secret, position, matched)
    return end


def _next_states(text: str, secret: str, position: int, matched: int) -> list[tuple[int, int]]:
    """The states one escape (or the secret's raw end) after ``(position, matched)``.

    The text is read raw while it equals the secret, a whole stretch between escape starts
    at once; at each escape start on the way, each escape of the secret's character there
    is one more state.
    """
    size, states = len(secret), list[tuple[int, int]]()
    here, done = position, matched  # text[position:here] equals secret[matched:done], raw
    while done < size:
        reach = here + size - done  # where the secret would end, read raw from here
        escape = _ESCAPE_START.search(text, here, reach + _ESCAPE_START_SPAN)
        stop = min(reach, len(text)) if escape is None else min(reach, escape.start())
        if not text.startswith(secret[done : done + stop - here], here):
            return states  # the stretch is not the secret, and holds no escape to read
        here, done = stop, done + stop - here
        if done == size or escape is None or here != escape.start():
            break
        states += _escaped(text, secret, here, done)
        if text[here] != secret[done]:
            return states  # no raw reading of this character
        here, done = here + 1, done + 1
    if done == size:
        states.append((here, done))
    return states


def _escaped(text: str, secret: str, position: int, matched: int) -> list[tuple[int, int]]:
    """The states after an escape of the secret's next character at ``position``."""
    states = [
        (found.end(), matched + 1)
        for form in _escapes_by_start(secret[matched]).get(text[position], ())
        if (found := form.match(text, position)) is not None
    ]
    if text[position] == "%":
        states += _percent_run(text, secret, position, matched)
    return states


def _agreeing(text: str, position: int, secret: str, matched: int, limit: int) -> int:
    """How many characters of ``text`` from ``position`` equal the secret's from ``matched``
    (at most ``limit``): compared in growing chunks, so the cost follows the agreement, not
    the length of what is compared."""
    low, step = 0, 16
    while low < limit:
        high = min(limit, low + step)
        if not text.startswith(secret[matched + low : matched + high], position + low):
            while high - low > 1:  # [0, low) agree; the first difference is in [low, high)
                middle = (low + high) // 2
                if text.startswith(secret[matched + low : matched + middle], position + low):
                    low = middle
                else:
                    high = middle
            return low
        low, step = high, step * 2
    return low


def _percent_run(text: str, secret: str, position: int, matched: int) -> list[tuple[int, int]]:
    """A run of ``%XX`` decoded at once and compared with the secret's next characters.

    Inside the run a ``%`` may also be the secret's own raw ``%``: each such place is a
    state of its own (after the ``%``); where the run stops agreeing is the state that
    tries the other forms.
    """
    bound = position + 12 * (len(secret) - matched)  # 4 UTF-8 bytes of 3 characters each
    run = _PERCENT_RUN.match(text, position, min(len(text), bound))
    if run is None:
        return []
    decoded = bytes.fromhex(run.group().replace("%", "")).decode("utf-8", "surrogateescape")
    agreed = _agreeing(decoded, 0, secret, matched, min(len(decoded), len(secret) - matched))
    states = [(position + 3 * _utf8_length(decoded[:agreed]), matched + agreed)] if agreed else []
    # Where the secret has a "%" the text's escape decodes to, that "%" may be taken raw.
    percent = decoded.find("%", 0, agreed)
    while percent >= 0:
        states.append((position + 3 * _utf8_length(decoded[:percent]) + 1, matched + percent + 1))
        percent = decoded.find("%", percent + 1, agreed)
    return states


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


def _start_pattern(prefix: str) -> re.Pattern[str]:
    """A regex for the first characters of a secret, each in any of its forms."""
    groups = ("|".join(form for _, form in _char_forms(char)) for char in prefix)
    return re.compile("".join(f"(?:{group})" for group in groups))


@lru_cache(maxsize=4096)
def _escapes_by_start(char: str) -> dict[str, tuple[re.Pattern[str], ...]]:
    """The escapes of ``char``, compiled, by their first character.

    Not the URL form (``_percent_run`` reads a run of those at once), nor the raw
    character (``_next_states`` compares raw text).
    """
    grouped: dict[str, list[re.Pattern[str]]] = {}
    for first, form in _char_forms(char)[1:-1]:
        grouped.setdefault(first, []).append(re.compile(form))
    return {first: tuple(forms) for first, forms in grouped.items()}


def _char_forms(char: str) -> list[tuple[str, str]]:
    """The ways one character is written: (the first character, a regex), escapes first.

    A backslash escape may be escaped once more (``re.escape`` in a JSON document, JSON
    in a ``repr``): each also appears with its backslashes doubled.
    """
    code = ord(char)
    url = "".join(f"%{_hex(byte, 2)}" for byte in char.encode("utf-8", "surrogatepass"))
    forms = [("%", url)]
    if char == " ":
        forms.append(("+", r"\+"))  # quote_plus and HTML forms
    forms.append(("&", f"&#0*{code};"))  # HTML, decimal
    forms.append(("&", f"&#[xX]0*{_hex(code, 1)};"))  # HTML, hexadecimal
    if char in _HTML_NAMES:
        forms.append(("&", f"&{_HTML_NAMES[char]};"))
    escaped = [_SHORT_ESCAPES[char]] if char in _SHORT_ESCAPES else []
    if char in _REGEX_SPECIAL:
        escaped.append("\\" + char)  # re.escape's form
    for form in escaped:
        forms.append(("\\", re.escape(form)))
        forms.append(("\\", re.escape(form.replace("\\", "\\\\"))))
    for slash in (r"\\", r"\\\\"):
        forms.extend(("\\", form) for form in _code_escapes(code, slash))
    forms.append((char, re.escape(char)))
    return list(dict.fromkeys(forms))


def _code_escapes(code: int, slash: str) -> list[str]:
    """``\\xNN``, ``\\uNNNN`` and ``\\UNNNNNNNN`` (JSON and repr), with JSON's surrogates.

    ``slash`` is the regex of the backslash (one, or two for an escape escaped again).
    """
    forms = [f"{slash}x{_hex(code, 2)}"] if code < 0x100 else []
    if code < 0x10000:
        forms.append(f"{slash}u{_hex(code, 4)}")
    else:
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        forms.append(f"{slash}u{_hex(high, 4)}{slash}u{_hex(low, 4)}")
        forms.append(f"{slash}U{_hex(code, 8)}")
    return forms


def _hex(value: int, width: int) -> str:
    """``value`` in hex as a regex that accepts either case of each letter."""
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{value:0{width}x}")
