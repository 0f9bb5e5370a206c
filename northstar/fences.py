"""The fences a browser stays inside, whichever front end drives it: pages and files.

Pure decisions over plain data. The Playwright adapter enforces them on every page it
drives (``browser_adapters.origin_gate`` before a document request leaves,
``browser_adapters.session`` before an explicit navigation, a read or an upload), and the
plan calls them while it is rendered, so a recipe that breaks one fails before any browser
starts.

- Pages: a tab loads only ``http``/``https`` pages of its role's origins, and
  ``about:blank``. ``file:``, ``data:``, ``javascript:``, ``blob:``, ``view-source:``,
  ``chrome:`` and every other scheme are refused (``SCHEME_BLOCKED``); another origin is
  ``ORIGIN_BLOCKED``.
- Files: an upload comes only from inside one of the allowed folders (the recipe's or the
  program's folder, a folder the user named with ``--files-dir``, or for an agent session
  the folder of ``northstar mcp --files``), once every symlink is resolved, and only a
  regular file. A relative path is read from the first of those folders.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from northstar.errors import ParamInvalid

__all__ = [
    "WEB_SCHEMES",
    "PageRefusal",
    "allowed_upload",
    "page_refusal",
    "refused_page_shown",
    "shown_page_url",
    "upload_refused",
    "url_origin",
]

WEB_SCHEMES = frozenset({"http", "https"})
# Schemes whose URL is the page's content itself: a refusal never repeats it.
_CONTENT_SCHEMES = frozenset({"data", "javascript"})

PageRefusal = Literal["scheme", "origin"]


def url_origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL, lower case (``""`` for a URL that is not one)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return f"{parts.scheme}://{parts.netloc}".lower()


def page_refusal(url: str, origins: Collection[str]) -> PageRefusal | None:
    """Why a tab whose role has ``origins`` may not load ``url`` at top level, if it may not.

    ``"scheme"``: not an http(s) page (``about:blank`` is allowed); ``"origin"``: an
    http(s) page of another origin.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "scheme"
    scheme = parts.scheme.lower()
    if scheme == "about" and parts.path == "blank" and not parts.netloc:
        return None
    if scheme not in WEB_SCHEMES or not parts.netloc:
        return "scheme"
    return None if url_origin(url) in origins else "origin"


def refused_page_shown(url: str) -> bool:
    """Whether a tab now shows a page no tab may load (read nothing from it).

    For pages the browser loads without a network request (a ``blob:`` a script made, say),
    so no gate saw them. The browser's own error page after a refused load is not one.
    """
    return page_refusal(url, ()) == "scheme" and not url.startswith("chrome-error:")


def shown_page_url(url: str) -> str:
    """A refused URL as a message may show it: a ``data:`` or ``javascript:`` URL is its
    content, so only its scheme is shown."""
    scheme, colon, _ = url.partition(":")
    if colon and scheme.lower() in _CONTENT_SCHEMES:
        return f"a {scheme.lower()}: URL"
    return url


def allowed_upload(path: str | Path, roots: Sequence[str | Path]) -> Path | None:
    """The regular file ``path`` names, symlinks resolved, if it lies inside one of ``roots``.

    A relative ``path`` is read from the first root. ``None`` when it is outside every
    root, missing, not a regular file, or when there is no root at all.
    """
    if not roots:
        return None
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = Path(roots[0]) / candidate
    try:
        real = candidate.resolve(strict=True)
        inside = any(real.is_relative_to(Path(root).resolve()) for root in roots)
    except (OSError, RuntimeError):  # missing, unreadable, or a symlink loop
        return None
    return real if inside and real.is_file() else None


def upload_refused(
    path: str, roots: Sequence[str | Path], *, where: str = "upload"
) -> ParamInvalid:
    """The error for a file ``allowed_upload`` refused, naming the path and the folders."""
    if not roots:
        message = f"{where}: {path!r} cannot be uploaded: no folder was given to upload from"
    else:
        folders = ", ".join(str(root) for root in roots)
        message = f"{where}: {path!r} is not a file inside the folders to upload from ({folders})"
    return ParamInvalid(
        message,
        fix=(
            "Put the file in the recipe's (or program's) folder, or name its folder with "
            "--files-dir DIR (northstar mcp --files DIR for an agent session)."
        ),
    )
