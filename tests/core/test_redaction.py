"""Redaction removes a secret in every form a writer may put it in, and in mixes of them."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from urllib.parse import quote, quote_plus

from hypothesis import given, settings
from hypothesis import strategies as st

from northstar.redaction import REDACTED, contains_secret, redact, redact_data

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
