"""URLs of a recording, made to run against another copy of the site.

The origin of the first URL the script visits is the site: it is written ``{{ base_url }}``
so the recipe runs with ``--base-url`` against any copy of it (a recording made on
``http://127.0.0.1:8000`` runs against a test server on another port). Other origins stay
as they are. A URL expectation keeps the path and writes query values as ``*``: the id in
``/thanks?id=7`` differs on every run.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from northstar.authoring.script import Regex
from northstar.authoring.targets import Unsupported

__all__ = ["SiteUrls"]

BASE = "{{ base_url }}"


class SiteUrls:
    """Remembers the site's origin (the first one seen) and rewrites URLs against it."""

    def __init__(self) -> None:
        self.site: str | None = None

    def origin_text(self, url: str) -> str | None:
        """How a URL's origin is written in ``origins`` (``None`` for a relative URL)."""
        parts = urlsplit(url)
        if not parts.scheme or not parts.netloc:
            return None
        origin = f"{parts.scheme}://{parts.netloc}"
        if self.site is None:
            self.site = origin
        return BASE if origin == self.site else origin

    def start(self, url: str) -> str:
        """A tab's start URL: absolute, the site's origin as ``{{ base_url }}``."""
        origin = self.origin_text(url)
        if origin != BASE:
            return url
        return BASE + _path_and_query(url)

    def goto(self, url: str) -> str:
        """A ``goto``: a path on the site (it resolves against the tab's start), else absolute."""
        return _path_and_query(url) if self.origin_text(url) == BASE else url

    def url_check(self, expected: Any) -> dict[str, Any]:
        """A ``url`` glob for a URL, or ``url_regex`` for ``re.compile(...)``."""
        if isinstance(expected, Regex):
            return {"url_regex": expected.pattern}
        if not isinstance(expected, str):
            raise Unsupported("a URL is text or re.compile(...)")
        if self.origin_text(expected) not in (BASE, None):
            return {"url": expected.split("?", 1)[0] + _query_glob(expected)}
        return {"url": "**" + urlsplit(expected).path + _query_glob(expected)}


def _path_and_query(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _query_glob(url: str) -> str:
    query = urlsplit(url).query
    if not query:
        return ""
    names = [pair.split("=", 1)[0] + ("=*" if "=" in pair else "") for pair in query.split("&")]
    return "?" + "&".join(names)
