"""Write the table of run endings into docs/drafts/run-endings.md from the code's own rows.

``python scripts/run_endings_table.py`` replaces the part of the page between the
``endings-table`` markers with ``northstar.readers.ending_text.endings_table()``;
``tests/readers/test_endings.py`` fails while the page and the code disagree.
"""

from __future__ import annotations

from pathlib import Path

from northstar.readers.ending_text import endings_table

PAGE = Path(__file__).resolve().parent.parent / "docs" / "drafts" / "run-endings.md"
START = "<!-- endings-table:start (scripts/run_endings_table.py writes this part) -->\n"
END = "<!-- endings-table:end -->\n"


def with_table(page: str, table: str) -> str:
    """``page`` with the text between the markers replaced by ``table``."""
    before, _, rest = page.partition(START)
    _, _, after = rest.partition(END)
    return f"{before}{START}{table}{END}{after}"


def main() -> None:
    PAGE.write_text(with_table(PAGE.read_text(encoding="utf-8"), endings_table()), "utf-8")


if __name__ == "__main__":
    main()
