"""The fences through the real CLI: ``northstar run`` in a process of its own, real Chromium.

A recipe that sends its tab to a local file fails with SCHEME_BLOCKED and the file's
content is in no output, log line or journal file; a recipe's upload that leaves its
folder is refused before any browser starts, naming the path; ``--files-dir`` names a
folder its files may also come from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import northstar, one_error_line, write
from tests.core.test_redaction import every_form

MARKER = "fence-marker-9044"

LOCAL_PAGE = """
name: local-page
timeout: 3000
tabs:
  site: {{start: "{{{{ base_url }}}}/form"}}
steps:
  - id: leave
    tab: site
    goto: "{url}"
outputs:
  shown: {{tab: site, from: text, target: {{role: heading}}}}
"""

UPLOAD = """
name: upload
params:
  attachment: {{type: file, default: {default}}}
tabs:
  site: {{start: "{{{{ base_url }}}}/form"}}
steps:
  - id: name
    tab: site
    fill: {{target: {{label: Name}}, value: Ada}}
  - id: agree
    tab: site
    check: {{target: {{role: checkbox, name: Agree to terms}}}}
  - id: attach
    tab: site
    upload: {{target: {{label: Attachment}}, files: [{files}]}}
  - id: send
    tab: site
    click: {{target: {{role: button, name: Send}}}}
    effect: submit
    expect:
      - title: {{contains: Thank}}
"""


@pytest.fixture
def folders(tmp_path: Path) -> dict[str, Path]:
    """A recipe folder with a file, and a private folder beside it."""
    recipe, private = tmp_path / "recipe", tmp_path / "private"
    recipe.mkdir()
    private.mkdir()
    (recipe / "notes.txt").write_text("notes")
    (private / "page.html").write_text(f"<h1>{MARKER}</h1>")
    (private / "other.txt").write_text("other notes")
    return {"recipe": recipe, "private": private}


def every_file(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in folder.rglob("*") if path.is_file())


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["file", "data"])
def test_a_recipe_sent_to_a_local_page_reads_nothing_of_it(
    tmp_path: Path, site: FixtureSite, folders: dict[str, Path], scheme: str
) -> None:
    url = {
        "file": (folders["private"] / "page.html").as_uri(),
        "data": f"data:text/html,<h1>{MARKER}</h1>",
    }[scheme]
    recipe = write(folders["recipe"], "local.yaml", LOCAL_PAGE.format(url=url))
    run = northstar(
        "-v", "--log-json", "run", str(recipe), "--base-url", site.base_url, "--json",
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode != 0, run.stdout + run.stderr
    result = json.loads(run.stdout)
    assert result["iterations"][0]["reason_code"] == "SCHEME_BLOCKED", result
    assert not result["iterations"][0]["outputs"]
    written = every_file(tmp_path / ".northstar") if (tmp_path / ".northstar").exists() else b""
    for seen in (run.stdout.encode(), run.stderr.encode(), (tmp_path / "journal.db").read_bytes()):
        assert MARKER.encode() not in seen
    assert MARKER.encode() not in written


@pytest.mark.parametrize(
    ("default", "files", "where"),
    [
        ("notes.txt", '"../private/other.txt"', "steps[2].upload"),
        ("../private/other.txt", '"{{ attachment }}"', "parameter 'attachment'"),
    ],
)
def test_an_upload_that_leaves_the_recipe_folder_is_refused_before_any_browser(
    tmp_path: Path, folders: dict[str, Path], default: str, files: str, where: str
) -> None:
    recipe = write(folders["recipe"], "up.yaml", UPLOAD.format(default=default, files=files))
    run = northstar("run", str(recipe), "--base-url", "http://127.0.0.1:9", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    line = one_error_line(run, "PARAM_INVALID")
    assert where in line["body"]
    assert "../private/other.txt" in line["body"] or "private/other.txt" in line["body"]
    assert "--files-dir" in line["fix"]


@pytest.mark.browser
def test_files_dir_names_a_folder_uploads_may_also_come_from(
    tmp_path: Path, site: FixtureSite, folders: dict[str, Path]
) -> None:
    text = UPLOAD.format(default="notes.txt", files='"{{ attachment }}"')
    recipe = write(folders["recipe"], "up.yaml", text)
    other = str(folders["private"] / "other.txt")
    base = ("run", str(recipe), "--base-url", site.base_url, "-p", f"attachment={other}")
    refused = northstar(*base, cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    one_error_line(refused, "PARAM_INVALID")
    allowed = northstar(*base, "--files-dir", str(folders["private"]), cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    (contact,) = site.submissions()
    assert contact["attachment_filename"] == "other.txt"


TOKEN = "a&b#c%d+e\\f\"g'h.i*"

FAILING_URL_CHECK = """
name: failing-url-check
params:
  token: {type: string, secret: true, required: true}
tabs:
  site: {start: "{{ base_url }}/form"}
steps:
  - id: at-the-query
    tab: site
    timeout: 400
    verify_outcome: {url: "**/form?q={{ token }}"}
  - id: as-a-pattern
    tab: site
    timeout: 400
    verify_outcome: {url_regex: "q={{ token }}"}
"""


def token_forms() -> dict[str, bytes]:
    """The token raw, in every writer's encoding, and re.escape'd (also inside a repr), as
    it is or percent-encoded first (a ``url`` check's glob becomes a regex of the URL)."""
    forms = {name: form.encode() for name, form in every_form(TOKEN).items()}
    for name, text in (("", TOKEN), (" of quote", quote(TOKEN, safe=""))):
        escaped = re.escape(text)
        forms[f"re.escape{name}"] = escaped.encode()
        forms[f"repr(re.escape{name})"] = repr(escaped)[1:-1].encode()
    return forms


@pytest.mark.browser
def test_a_secret_in_a_failing_url_check_is_found_in_no_output_or_file(
    tmp_path: Path, site: FixtureSite
) -> None:
    recipe = write(tmp_path, "check.yaml", FAILING_URL_CHECK)
    run = northstar(
        "-v", "--log-json", "run", str(recipe), "--base-url", site.base_url,
        "-p", f"token={TOKEN}", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode != 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["iterations"][0]["reason_code"] == "EXPECTATION_FAILED"
    run_id = json.loads(run.stdout)["run_id"]
    shown = northstar("show", run_id, "--json", cwd=tmp_path)
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "check.yaml"]
    texts = {"run": (run.stdout + run.stderr).encode(), "show": shown.stdout.encode()}
    texts |= {str(path): path.read_bytes() for path in written}
    leaks = {
        where: [name for name, form in token_forms().items() if form in data]
        for where, data in texts.items()
    }
    assert {where: found for where, found in leaks.items() if found} == {}
