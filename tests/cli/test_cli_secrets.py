"""A secret used in a URL query, a fill and checks of a real run leaves no trace in any form.

``northstar run`` drives real headless Chromium against the fixture site in a process of
its own, with verbose JSON logs; then ``show``, ``show --json``, ``runs --json`` and
``report`` read the run. Every file under the run's folder (the journal and its WAL,
the artifacts, the report) and every stdout and stderr is scanned, as bytes, for the
secret raw, URL-encoded (quote and quote_plus, upper and lower case hex), HTML-escaped,
JSON-escaped and as Python's repr.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import northstar, write
from tests.core.test_redaction import every_form

TOKEN = "Pw& #/%+\\\"'\tend<é>"

RECIPE = """\
name: secret-forms
params:
  token: {type: string, secret: true, required: true}
tabs:
  site: {start: "{{ base_url }}/posts?q={{ token }}"}
steps:
  - id: searched
    tab: site
    verify_outcome: {value: {target: {label: Search}, equals: "{{ token }}"}}
  - id: at-the-query
    tab: site
    verify_outcome: {url: "**/posts?q={{ token }}"}
  - id: open-form
    tab: site
    goto: /form
  - id: name
    tab: site
    fill: {target: {label: Name}, value: Ada}
  - id: message
    tab: site
    fill: {target: {label: Message}, value: "{{ token }}"}
  - id: typed
    tab: site
    verify_field: {target: {label: Message}, equals: "{{ token }}"}
  - id: send
    tab: site
    click: {target: {role: button, name: Send}}
    effect: submit
    expect:
      - title: {contains: Thank}
outputs:
  page: {tab: site, from: url}
done_when:
  - {tab: site, title: {contains: Thank}}
"""


def leaks(data: bytes) -> list[str]:
    """The names of the forms of the token found in ``data``."""
    return [name for name, form in every_form(TOKEN).items() if form.encode() in data]


@pytest.mark.browser
def test_no_form_of_a_secret_is_written_or_printed(tmp_path: Path, site: FixtureSite) -> None:
    recipe = write(tmp_path, "secret.yaml", RECIPE)
    run = northstar(
        "-v", "--log-json", "run", str(recipe), "--base-url", site.base_url,
        "-p", f"token={TOKEN}", "--json", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    contact = site.submissions()[-1]
    assert contact["message"] == TOKEN  # the secret really went through the browser
    run_id = json.loads(run.stdout)["run_id"]  # with --log-json, stderr is JSON lines only
    readers = [
        northstar("show", run_id, cwd=tmp_path),
        northstar("show", run_id, "--json", cwd=tmp_path),
        northstar("runs", "--json", cwd=tmp_path),
        northstar("report", run_id, cwd=tmp_path),
    ]
    assert all(proc.returncode == 0 for proc in readers), [p.stderr for p in readers]
    outputs: list[subprocess.CompletedProcess[str]] = [run, *readers]
    printed = {f"{p.args[3:5]} {stream}": text for p in outputs for stream, text in
               (("stdout", p.stdout), ("stderr", p.stderr))}  # fmt: skip
    assert {
        where: leaks(text.encode()) for where, text in printed.items() if leaks(text.encode())
    } == {}
    written = [
        path for path in tmp_path.rglob("*") if path.is_file() and path.name != "secret.yaml"
    ]
    assert any(path.name == "report.html" for path in written)
    assert any(path.name.startswith("journal.db") for path in written)
    found = {str(path): leaks(path.read_bytes()) for path in written}
    assert {path: forms for path, forms in found.items() if forms} == {}
