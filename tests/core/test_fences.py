"""The fences' decisions on plain data: which page a tab may load, which file may be uploaded.

The browser tests (tests/browser/test_fences.py) show the adapter enforces these on every
path; here each decision is pinned as a table.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from northstar.errors import ParamInvalid
from northstar.fences import allowed_upload, page_refusal, shown_page_url, upload_refused

ORIGINS = frozenset({"http://127.0.0.1:8123", "https://admin.example.test"})


@pytest.mark.parametrize(
    ("url", "refusal"),
    [
        ("http://127.0.0.1:8123/", None),
        ("http://127.0.0.1:8123", None),
        ("HTTP://127.0.0.1:8123/form?x=1#top", None),
        ("https://admin.example.test/posts", None),
        ("about:blank", None),
        ("http://127.0.0.1:81234/", "origin"),
        ("https://127.0.0.1:8123/", "origin"),  # another scheme is another origin
        ("http://127.0.0.1:8123.evil.test/", "origin"),
        ("http://user@127.0.0.1:8123/", "origin"),
        ("file:///etc/passwd", "scheme"),
        ("FILE:///etc/passwd", "scheme"),
        ("data:text/html,<h1>hi</h1>", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("blob:http://127.0.0.1:8123/5f0c", "scheme"),
        ("view-source:http://127.0.0.1:8123/", "scheme"),
        ("chrome://version", "scheme"),
        ("about:srcdoc", "scheme"),
        ("ftp://127.0.0.1:8123/", "scheme"),
        ("http:///no-host", "scheme"),
        ("http://[::1/", "scheme"),  # not a URL at all
        ("/relative/path", "scheme"),
    ],
)
def test_which_page_a_tab_may_load(url: str, refusal: str | None) -> None:
    assert page_refusal(url, ORIGINS) == refusal


def test_without_origins_no_web_page_loads() -> None:
    assert page_refusal("http://127.0.0.1:8123/", frozenset()) == "origin"
    assert page_refusal("about:blank", frozenset()) is None


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("data:text/html,<p>root:x:0:0</p>", "a data: URL"),
        ("JavaScript:fetch('/x')", "a javascript: URL"),
        ("file:///etc/passwd", "file:///etc/passwd"),
        ("http://127.0.0.1/x", "http://127.0.0.1/x"),
    ],
)
def test_a_refused_url_that_is_its_own_content_is_not_repeated(url: str, shown: str) -> None:
    assert shown_page_url(url) == shown


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """A recipe folder with a file, a subfolder and links; a secret file beside it."""
    recipe = tmp_path / "recipe"
    (recipe / "files").mkdir(parents=True)
    (recipe / "files" / "notes.txt").write_text("notes")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (recipe / "link-out.txt").symlink_to(outside / "secret.txt")
    (recipe / "link-in.txt").symlink_to(recipe / "files" / "notes.txt")
    (recipe / "dir-out").symlink_to(outside)
    os.mkfifo(recipe / "pipe")
    return recipe, outside


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("files/notes.txt", "files/notes.txt"),
        ("{recipe}/files/notes.txt", "files/notes.txt"),
        ("link-in.txt", "files/notes.txt"),  # a link that stays inside
        ("files/../files/notes.txt", "files/notes.txt"),
        ("../outside/secret.txt", None),  # `..` that leaves the folder
        ("{recipe}/../outside/secret.txt", None),
        ("{outside}/secret.txt", None),
        ("link-out.txt", None),  # a link that points out
        ("dir-out/secret.txt", None),  # through a linked folder
        ("/etc/passwd", None),
        ("files", None),  # a folder
        ("pipe", None),  # a FIFO would block the browser's read
        ("missing.txt", None),
    ],
)
def test_which_file_may_be_uploaded(
    folders: tuple[Path, Path], path: str, allowed: str | None
) -> None:
    recipe, outside = folders
    given = path.format(recipe=recipe, outside=outside)
    expected = None if allowed is None else (recipe / allowed).resolve()
    assert allowed_upload(given, [recipe]) == expected


def test_a_second_folder_allows_its_files_and_no_folder_allows_none(
    folders: tuple[Path, Path],
) -> None:
    recipe, outside = folders
    secret = outside / "secret.txt"
    assert allowed_upload(str(secret), [recipe, outside]) == secret.resolve()
    assert allowed_upload(str(secret), []) is None
    assert allowed_upload("secret.txt", []) is None


def test_a_refused_upload_names_the_path_the_folders_and_the_flags() -> None:
    error = upload_refused("/etc/passwd", ["/srv/recipes"], where="steps[2].upload")
    assert isinstance(error, ParamInvalid)
    assert "steps[2].upload: '/etc/passwd'" in error.message
    assert "/srv/recipes" in error.message
    assert "--files-dir" in error.fix
    assert "mcp --files" in error.fix
    assert "no folder" in upload_refused("a.txt", []).message
