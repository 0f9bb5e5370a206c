"""What redacting a long secret costs, in each form a writer may put it in.

    PYTHONPATH=. .venv/bin/python scripts/redaction_cost.py [MEGABYTES]

A measurement, not a test: it prints seconds and asserts nothing but that the secret is
gone. The secret mixes letters with ``& # % + \\ " '`` and one non-ASCII letter, so every
kind of escape occurs. For comparison, the regex of one group per character of the secret
(how redaction worked before ``SecretMatcher``) is built for a few small sizes: its cost
grows faster than the secret.
"""

from __future__ import annotations

import html
import json
import re
import sys
import time
from collections.abc import Callable
from urllib.parse import quote, quote_plus

from northstar.redaction import REDACTED, _char_forms, _matcher

PIECE = "Pw&#%+\\\"'-abcdefghijklmnopqrstuvwxyz-é-0123456789"

FORMS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "quote": lambda s: quote(s, safe=""),
    "quote_plus": lambda s: quote_plus(s, safe=""),
    "html": lambda s: html.escape(s, quote=True),
    "json": lambda s: json.dumps(s)[1:-1],
    "repr": lambda s: repr(s)[1:-1],
    "re.escape": re.escape,
}


def secret_of(length: int) -> str:
    return (PIECE * (length // len(PIECE) + 1))[:length]


def timed(action: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (the CPU time holds on a machine others load too)."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def per_character_regex(secret: str) -> re.Pattern[str]:
    groups = ("|".join(form for _, form in _char_forms(c)) for c in secret)
    return re.compile("".join(f"(?:{group})" for group in groups))


def main() -> None:
    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    secret = secret_of(int(megabytes * 1_000_000))
    print(f"secret: {len(secret):,} characters")
    built, _ = timed(lambda: _matcher((secret,)))
    print(f"  matcher built: {built:.3f} s")
    for name, encode in FORMS.items():
        text = f"url matching {encode(secret)} expected"
        matcher = _matcher((secret,))
        wall, cpu = timed(lambda text=text, matcher=matcher: matcher.sub(REDACTED, text))
        assert matcher.sub(REDACTED, text) == f"url matching {REDACTED} expected", name
        print(f"  {name:<11} {len(text):>10,} characters: {wall:.3f} s ({cpu:.3f} s CPU)")
    print("one regex group per character (the former way), compile time:")
    for length in (5_000, 10_000, 20_000, 40_000):
        wall, cpu = timed(lambda length=length: per_character_regex(secret_of(length)))
        print(f"  {length:>7,} characters: {wall:.2f} s ({cpu:.2f} s CPU)")


if __name__ == "__main__":
    main()
