"""``import-codegen``'s core: a codegen script's text in, recipe text and a summary out.

Nothing here touches the disk or a browser; the CLI reads the script, writes the recipe
and validates it. Secret values typed in the recording are replaced by their parameter
wherever the script repeats them, and ``redact`` scrubs every comment as a last guard.
"""

from __future__ import annotations

from dataclasses import dataclass

from northstar.authoring.convert import convert_statements
from northstar.authoring.emit import emit_recipe
from northstar.authoring.script import read_script
from northstar.authoring.submissions import mark_submissions
from northstar.redaction import redact

__all__ = ["ImportedRecipe", "import_codegen"]

_MIN_GUARDED = 4  # shorter secrets would blank out ordinary words of the recipe


@dataclass(frozen=True, slots=True)
class ImportedRecipe:
    """The recipe text and what a person should know about it."""

    text: str
    steps: int
    params: tuple[str, ...]
    secret_params: tuple[str, ...]
    submissions_without_expect: tuple[str, ...]
    kept_as_comments: tuple[int, ...]  # script lines with no recipe equivalent
    site: str | None  # the recorded origin, written {{ base_url }}


def import_codegen(script: str, *, name: str, source: str = "<script>") -> ImportedRecipe:
    """Convert a ``playwright codegen --target python-async`` script (never run)."""
    draft = convert_statements(read_script(script, source=source))
    missing = mark_submissions(draft.steps)
    secrets = draft.secrets

    def scrub(text: str) -> str:
        return redact(draft.secret_lifter(text), secrets)

    description = f"Recorded with playwright codegen ({source})."
    text = emit_recipe(draft, name=name, description=description, scrub=scrub)
    # A secret the rules above did not replace (inside a recorded URL) is still not written.
    text = redact(text, [value for value in secrets if len(value) >= _MIN_GUARDED])
    return ImportedRecipe(
        text=text,
        steps=len(draft.steps),
        params=tuple(draft.params),
        secret_params=tuple(n for n, p in draft.params.items() if p.get("secret")),
        submissions_without_expect=tuple(missing),
        kept_as_comments=tuple(draft.unknown_lines),
        site=draft.site,
    )
