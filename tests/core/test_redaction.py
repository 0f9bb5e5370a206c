"""Redaction removes a secret in every form a writer may put it in, and in mixes of them."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from northstar import redaction
from northstar.redaction import (
    REDACTED,
    _char_forms,
    contains_secret,
    redact,
    redact_data,
    secret_matcher,
)

SECRET = "Pw& #/%+\\\"'\tend<é>"


def lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), text)


FORMS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "quote": lambda s: quote(s, safe=""),
    "quote, / kept": lambda s: quote(s),
    "quote_plus": lambda s: quote_plus(s, safe=""),
    "quote, lower hex": lambda s: lower_hex(quote(s, safe="")),
    "quote_plus, lower hex": lambda s: lower_hex(quote_plus(s, safe="")),
    "html": lambda s: html.escape(s, quote=True),
    "html, quotes kept": lambda s: html.escape(s, quote=False),
    "json": lambda s: json.dumps(s)[1:-1],
    "json, unicode kept": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    "repr": lambda s: repr(s)[1:-1],
    "ascii": lambda s: ascii(s)[1:-1],
}


def every_form(secret: str) -> dict[str, str]:
    return {name: encode(secret) for name, encode in FORMS.items()}


def test_every_form_of_a_secret_is_redacted() -> None:
    for name, form in every_form(SECRET).items():
        text = f"before {form} after"
        assert redact(text, {SECRET}) == f"before {REDACTED} after", name
        assert contains_secret(text, {SECRET}), name


def test_a_mix_of_forms_is_redacted() -> None:
    # The browser leaves "/" and "'" alone in a query that Python would encode.
    mixed = quote(SECRET, safe="/'").replace("%26", "&amp;")
    assert redact(f"q={mixed}", {SECRET}) == f"q={REDACTED}"


def test_text_without_the_secret_is_unchanged() -> None:
    text = "Pw& #/%+ a harmless line with %20 and &amp; and \\t"
    assert redact(text, {SECRET}) == text
    assert not contains_secret(text, {SECRET})
    assert redact(text, set()) == text
    assert redact(text, {""}) == text


def test_the_longest_secret_wins_over_one_it_contains() -> None:
    assert redact("token-abc-123", {"abc", "token-abc-123"}) == REDACTED


def test_nested_data_is_redacted_everywhere() -> None:
    data = {"a": [quote(SECRET), {"b": repr(SECRET)}], "n": 3}
    assert redact_data(data, {SECRET}) == {"a": [REDACTED, {"b": "'" + REDACTED + "'"}], "n": 3}


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("&#/%+\\\"' \t<>"), min_size=1),
    st.sampled_from(sorted(FORMS)),
    st.text(max_size=10),
)
def test_no_form_of_any_secret_survives(secret: str, form: str, around: str) -> None:
    redacted = redact(around + FORMS[form](secret) + around, {secret})
    assert REDACTED in redacted
    forms = [encoded for encoded in every_form(secret).values() if encoded]
    for piece in redacted.split(REDACTED):  # the marker itself may share characters
        assert not any(encoded in piece for encoded in forms)


def test_the_regex_escaped_form_of_a_failing_url_check_is_redacted() -> None:
    secret = "a&b#c%d+e\\f\"g'h.i*"
    shown = f"url matching {re.escape(secret)!r} expected, found /p?q={quote(secret)}"
    redacted = redact(shown, {secret})
    assert redacted == f"url matching '{REDACTED}' expected, found /p?q={REDACTED}", redacted


def reference_pattern(secret: str) -> re.Pattern[str]:
    """Every form of each character, as one regex per character: exact, but slow to build."""
    groups = ("|".join(form for _, form in _char_forms(char)) for char in secret)
    return re.compile("".join(f"(?:{group})" for group in groups))


TRICKY = st.sampled_from("&#/%+\\\"' \t<>aA1é😀;xu25") | st.characters(codec="utf-8")


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=TRICKY, min_size=1, max_size=12),
    st.lists(st.sampled_from([*sorted(FORMS), "re.escape"]), min_size=1, max_size=12),
    st.text(alphabet=TRICKY, max_size=6),
)
def test_a_form_per_character_is_found_and_none_is_left(
    secret: str, forms: list[str], around: str
) -> None:
    """Each character in its own form: every place found is the secret (by the slow, exact
    regex), and what is left between the redactions holds it nowhere."""
    encode = {**FORMS, "re.escape": re.escape}
    mixed = "".join(encode[forms[i % len(forms)]](char) for i, char in enumerate(secret))
    text = around + mixed + around
    matcher = secret_matcher([secret])
    assert matcher is not None
    reference = reference_pattern(secret)
    spans = matcher.spans(text)
    assert spans
    for begin, end in spans:
        assert reference.fullmatch(text, begin, end), (text, begin, end)
    left = matcher.sub(REDACTED, text).split(REDACTED)
    assert not any(reference.search(piece) for piece in left), (text, spans)


@pytest.mark.parametrize(
    ("secret", "shown"),
    [
        ("A%25", "%41%25"),  # a quoted "A", then the secret's own "%25" raw
        ("%41", "%41"),  # raw, though it reads as a quoted "A"
        ("%41", "%2541"),
        ("a&amp;b", "a&amp;amp;b"),
        ("\\n", "\\n"),  # a backslash and an n, raw
        ("\\n", "\\\\n"),
        ("x y+z", "x+y%2Bz"),
        ("é😀", "\\u00e9\\ud83d\\ude00"),
        ("a&b", "a\\\\&b"),  # re.escape inside JSON
    ],
)
def test_secrets_that_look_like_escapes_are_found_in_every_reading(secret: str, shown: str) -> None:
    assert redact(f"<{shown}>", {secret}) == f"<{REDACTED}>"


def test_a_long_secret_costs_work_in_proportion_to_its_escapes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A megabyte secret: no regex grows with it, and the steps follow the escapes in the
    text (a quadratic matcher would take steps in proportion to the secret's length)."""
    piece = "Pw&#%+\\\"'-abcdefghijklmnopqrstuvwxyz0123456789" * 4
    secret = (piece * (1_000_000 // len(piece) + 1))[:1_000_000]
    compiled: list[int] = []
    steps = 0
    real_compile, real_next = re.compile, redaction._next_states

    def counted_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
        compiled.append(len(pattern))
        return real_compile(pattern, flags)

    def counted_next(*args: Any) -> Any:
        nonlocal steps
        steps += 1
        return real_next(*args)

    monkeypatch.setattr(redaction.re, "compile", counted_compile)
    monkeypatch.setattr(redaction, "_next_states", counted_next)
    for form in ("raw", "quote", "json", "html", "repr"):
        text = f"expected {FORMS[form](secret)} to be gone"
        steps = 0
        assert redact(text, {secret}) == f"expected {REDACTED} to be gone", form
        escape_starts = len(re.findall(r"[%&\\+]", text))
        assert steps <= escape_starts + 10, (form, steps, escape_starts)
    assert sum(compiled) < 20_000  # a few small patterns, whatever the secret's length
