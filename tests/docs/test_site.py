"""The documentation site builds in strict mode, and no link in it or the README is broken.

Strict mode already fails on a link to a missing page or anchor in the Markdown; this test
also reads the built HTML (generated pages and mkdocstrings' output included) and checks
every internal link and anchor offline. External links are not fetched: they must point
at a host this list names, so a new one is a decision.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.conftest import REPO

EXTERNAL_HOSTS = {
    "docs.dbos.dev",
    "import-linter.readthedocs.io",
    "keepachangelog.com",
    "semver.org",
    "github.com",  # the theme's footer
    "squidfunk.github.io",  # the theme's "made with" link
    "www.mkdocs.org",
}


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "a" and found.get("name"):
            self.ids.add(str(found["name"]))
        for key in ("href", "src"):
            value = found.get(key)
            if value and tag in ("a", "img"):
                self.links.append(value)


def parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return out


def test_every_internal_link_and_anchor_of_the_site_resolves(site: Path) -> None:
    pages = {page: parse(page) for page in site.rglob("*.html")}
    broken: list[str] = []
    external: set[str] = set()
    for page, parsed in pages.items():
        if page.name == "404.html":
            continue  # served for any missing path, so its links are absolute
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https"):
                external.add(parts.netloc)
                continue
            if parts.scheme or link.startswith("//"):
                continue  # data: images, mailto:
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert broken == []
    assert external <= EXTERNAL_HOSTS, external - EXTERNAL_HOSTS


def test_the_generated_reference_pages_are_in_the_site(site: Path) -> None:
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    assert "--params-file" in cli
    errors = (site / "reference" / "errors.html").read_text(encoding="utf-8")
    assert "OUTCOME_SETTLING" in errors
    schema = (site / "reference" / "recipe-schema.html").read_text(encoding="utf-8")
    assert "after_submit" in schema
    api = (site / "reference" / "python-api.html").read_text(encoding="utf-8")
    assert "run_sync" in api
    assert "RunResult" in api
    assert not (site / "drafts").exists()


def test_every_relative_link_of_the_readme_names_a_page_of_the_site(site: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    relative = [link for link in links if not urlsplit(link).scheme]
    assert "docs/tutorials/first-recipe.md" in relative
    for link in relative:
        assert (REPO / link).is_file(), link
        if link.startswith("docs/"):
            built = site / Path(link).relative_to("docs").with_suffix(".html")
            assert built.is_file(), link


def test_the_first_recipe_tutorial_is_one_click_from_the_top_of_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    top = "\n".join(readme.splitlines()[:10])
    assert "](docs/tutorials/first-recipe.md)" in top
