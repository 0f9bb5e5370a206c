"""What a person sees of target matching: validate's error, the schema, and the journal
naming the element each action resolved to (``show``, ``show --json``, ``report``).

The CLI runs in a separate process, as in ``test_cli_run``; the run goes against the
fixture site in real headless Chromium and is then read back by the reader commands.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import SECRET, northstar, one_error_line, write

LOOSE_SUBMIT = """\
name: loose-submit
tabs:
  site: {start: "http://127.0.0.1:1/decoy"}
steps:
  - id: send
    tab: site
    click: {target: {role: button, name: Submit, exact: false}}
    effect: submit
    expect:
      - url: "**/decoy/done*"
"""


def test_validate_rejects_a_loose_submit_target_at_its_line(tmp_path: Path) -> None:
    recipe = write(tmp_path, "loose.yaml", LOOSE_SUBMIT)
    proc = northstar("validate", str(recipe), cwd=tmp_path)
    assert proc.returncode == 2
    match = one_error_line(proc, "RECIPE_INVALID")
    assert match["body"].startswith(f"{recipe}:7:50: steps[0].click.target.exact: ")
    assert "a submit step acts on a loose target" in match["body"]
    assert "allow_loose_target: true" in match["fix"]


def test_validate_accepts_it_with_the_explicit_opt_in(tmp_path: Path) -> None:
    text = LOOSE_SUBMIT.replace(
        "    effect: submit\n", "    effect: submit\n    allow_loose_target: true\n"
    )
    recipe = write(tmp_path, "opted-in.yaml", text)
    proc = northstar("validate", str(recipe), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"ok {recipe}")


def test_schema_describes_exact_and_the_opt_in(tmp_path: Path) -> None:
    proc = northstar("schema", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    exact = schema["$defs"]["Target"]["properties"]["exact"]
    assert exact["default"] is True
    assert "case-sensitive" in exact["description"]
    opt_in = schema["$defs"]["Step"]["properties"]["allow_loose_target"]
    assert opt_in["default"] is False


EVERY_ACTION = """\
name: every-action
params:
  password: {type: string, secret: true, required: true}
tabs:
  site: {start: "{{ base_url }}/form"}
  login: {start: "{{ base_url }}/login"}
steps:
  - {id: name, tab: site, fill: {target: {label: Name}, value: Ada}}
  - {id: email, tab: site, fill: {target: {label: Email}, value: ada@example.test}}
  - {id: leave-email, tab: site, press: {key: Tab, target: {label: Email}}}
  - {id: topic, tab: site, select: {target: {label: Topic}, value: sales}}
  - {id: subscribe, tab: site, check: {target: {role: checkbox, name: Subscribe to newsletter}}}
  - {id: unsubscribe, tab: site, uncheck: {target: {role: checkbox, name: Subscribe to newsletter}}}
  - {id: agree, tab: site, check: {target: {role: checkbox, name: Agree to terms}}}
  - {id: attach, tab: site, upload: {target: {label: Attachment}, files: [note.txt]}}
  - {id: point, tab: site, hover: {target: {role: button, name: Send}}}
  - id: send
    tab: site
    click: {target: {role: button, name: Send}}
    effect: submit
    expect:
      - visible: {role: heading, name: Thank you}
  - {id: password, tab: login, fill: {target: {label: Password}, value: "{{ password }}"}}
"""


def expected_acted_on(base_url: str) -> dict[str, str]:
    send = f'button "Send" <button>; submits form: POST {base_url}/form'
    return {
        "name": 'textbox "Name" <input type=text>',
        "email": 'textbox "Email" <input type=email>',
        "leave-email": 'textbox "Email" <input type=email>',
        "topic": 'combobox "Topic" <select>',
        "subscribe": 'checkbox "Subscribe to newsletter" <input type=checkbox>',
        "unsubscribe": 'checkbox "Subscribe to newsletter" <input type=checkbox>',
        "agree": 'checkbox "Agree to terms" <input type=checkbox>',
        "attach": '"Attachment" <input type=file>',
        "point": send,
        "send": send,
        "password": 'textbox "Password" <input type=password>',
    }


@pytest.fixture
def verified_run(tmp_path: Path, site: FixtureSite) -> str:
    """Run EVERY_ACTION once (verified) and return its run id."""
    recipe = write(tmp_path, "every-action.yaml", EVERY_ACTION)
    write(tmp_path, "note.txt", "a note\n")
    args = ("run", str(recipe), "--base-url", site.base_url, "-p", f"password={SECRET}")
    proc = northstar(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert site.submission_count("contact") == 1
    runs = json.loads(northstar("runs", "--json", cwd=tmp_path).stdout)
    return str(runs[0]["run_id"])


@pytest.mark.browser
def test_show_json_names_the_element_of_every_acting_step(
    tmp_path: Path, site: FixtureSite, verified_run: str
) -> None:
    proc = northstar("show", verified_run, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stdout
    (iteration,) = json.loads(proc.stdout)["iterations"]
    assert iteration["state"] == "verified"
    found: dict[str, list[str]] = {}
    for step in iteration["steps"]:
        acted = [e for e in step["evidence"] if e["kind"] == "acted_on"]
        if acted:
            found[step["step_id"]] = [e["found"] for e in acted]
            assert all(e["passed"] for e in acted)
    expected = expected_acted_on(site.base_url)
    assert found == {step: [description] for step, description in expected.items()}
    send = next(s for s in iteration["steps"] if s["step_id"] == "send")
    assert send["evidence"][0]["expected"] == 'click button "Send"'


@pytest.mark.browser
def test_show_and_the_report_print_what_was_acted_on(
    tmp_path: Path, site: FixtureSite, verified_run: str
) -> None:
    text = northstar("show", verified_run, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = re.findall(r"^\s+acted on: (.+)$", text.stdout, re.M)
    assert lines == list(expected_acted_on(site.base_url).values())
    out = tmp_path / "report.html"
    report = northstar("report", verified_run, "--out", str(out), cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    page = out.read_text(encoding="utf-8")
    assert page.count('class="pass acted-on"') == len(expected_acted_on(site.base_url))
    # The page escapes as its template engine does (a quote is &#34;).
    assert (
        f"acted on: button &#34;Send&#34; &lt;button&gt;; submits form: POST {site.base_url}/form"
        in page
    )
    assert SECRET not in text.stdout + page
