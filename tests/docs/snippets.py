"""The fenced code blocks of the documentation and the README, as the tests read them.

A block's info string is its language and, optionally, ``title="FILE"``: the file a reader
saves it as (MkDocs Material shows the title above the block; GitHub shows the language).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO

DOCS = REPO / "docs"
# Pages other engineers are drafting: not part of the site yet (mkdocs.yml excludes them).
DRAFTS = DOCS / "drafts"
# The address the pages give the practice site (`python -m fixtures.site_server --port 8000`).
DOCUMENTED_SITE = "http://127.0.0.1:8000"

_FENCE = re.compile(
    r"^(?P<indent>[ ]*)```(?P<lang>[\w-]*)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=indent)```[ ]*$",
    re.MULTILINE | re.DOTALL,
)
_TITLE = re.compile(r'title="([^"]+)"')


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    title: str | None
    body: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def pages() -> list[Path]:
    """Every Markdown page of the site, and the README."""
    found = [p for p in sorted(DOCS.rglob("*.md")) if DRAFTS not in p.parents]
    return [*found, REPO / "README.md"]


def blocks(lang: str, page: Path | None = None) -> list[Block]:
    """The fenced blocks of ``lang`` on one page, or on every page."""
    found: list[Block] = []
    for path in [page] if page else pages():
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            if match["lang"] != lang:
                continue
            title = _TITLE.search(match["info"])
            indent = len(match["indent"])
            body = "".join(line[indent:] for line in match["body"].splitlines(keepends=True))
            line = text.count("\n", 0, match.start()) + 1
            found.append(Block(path, line, lang, title[1] if title else None, body))
    return found


def titled(page: Path, title: str) -> Block:
    """The one block of ``page`` saved as ``title``."""
    (block,) = [b for b in _all_blocks(page) if b.title == title]
    return block


def _all_blocks(page: Path) -> list[Block]:
    return [b for lang in ("yaml", "python", "csv", "json") for b in blocks(lang, page)]
