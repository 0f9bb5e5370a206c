"""The fences for a Python program: what its code asks the host for, refused the same way.

The program runs in its own process and reaches the browser only through the SDK and the
host; it tries a local file, a ``data:`` page and uploads from outside its folder, and
records each answer's code as an output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fixtures.site_server import FixtureSite
from northstar.journal import Journal
from tests.programs.conftest import run_program_file, write_program
from tests.programs.test_broker import _outputs

MARKER = "fence-marker-3307"

BODY = """
tab = nx.tab("site")
codes = {{}}
for name, url in {urls!r}.items():
    try:
        await tab.goto(url)
        codes[name] = "loaded"
    except Exception as exc:
        codes[name] = exc.code
for name, path in {paths!r}.items():
    try:
        await tab.upload({{"label": "Attachment"}}, [path])
        codes[name] = "uploaded"
    except Exception as exc:
        codes[name] = exc.code
await nx.output("codes", json.dumps(codes))
await nx.complete()
"""
DECLARATION = (
    'PROGRAM = {"name": "fenced", "outputs": ["codes"], '
    '"tabs": {"site": {"start": "{{ base_url }}/form"}}}'
)


async def test_a_program_loads_only_web_pages_and_uploads_only_from_its_folder(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    folder, private = tmp_path / "program", tmp_path / "private"
    folder.mkdir()
    private.mkdir()
    (folder / "notes.txt").write_text("notes")
    (private / "page.html").write_text(f"<p>{MARKER}</p>")
    urls = {"file": (private / "page.html").as_uri(), "data": f"data:text/html,<p>{MARKER}</p>"}
    paths = {
        "absolute": str(private / "page.html"),
        "dot-dot": "../private/page.html",
        "inside": "notes.txt",
    }
    body = "import json\n" + BODY.format(urls=urls, paths=paths)
    program = write_program(folder, body, declaration=DECLARATION)
    outcome = await run_program_file(program, host, journal, site.base_url)
    outputs = _outputs(journal, outcome.run_id)
    assert json.loads(outputs[(1, "codes")]) == {
        "file": "SCHEME_BLOCKED",
        "data": "SCHEME_BLOCKED",
        "absolute": "PARAM_INVALID",
        "dot-dot": "PARAM_INVALID",
        "inside": "uploaded",
    }
    assert MARKER.encode() not in (tmp_path / "journal.db").read_bytes()
