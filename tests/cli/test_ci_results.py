"""``run --junit`` and ``run --results``: a 5-row run with one failing row, as CI reads it.

The run is real (the CLI in a child process, headless Chromium, the fixture site); the
JUnit XML is checked against both vendored schemas (tests/cli/junit_schemas/SOURCES.md),
and no file, nor ``show`` or ``--json``, holds the secret the rows were run with.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import xmlschema

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import northstar, one_error_line, write

pytestmark = pytest.mark.browser

SCHEMAS = Path(__file__).parent / "junit_schemas"
TOKEN = "tok-9f3e-never-in-results"

ROWS_RECIPE = """
name: ci-rows
params:
  name: {type: string, required: true}
  title: {type: string, required: true}
  token: {type: string, secret: true, required: true}
tabs:
  site: {start: "{{ base_url }}/form"}
steps:
  - id: name
    tab: site
    fill: {target: {label: Name}, value: "{{ name }}"}
  - id: token
    tab: site
    fill: {target: {label: Message}, value: "{{ token }}"}
  - id: check-title
    tab: site
    timeout: 3000
    verify_outcome: {title: {contains: "{{ title }}"}}
outputs:
  shown: {tab: site, from: url}
"""

ROWS = "name,title\nAnn,Contact\nBob,Contact\nCy,Nowhere to be found\nDee,form\nEve,Contact\n"


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory, site_server: FixtureSite) -> dict[str, object]:
    """One run of five rows (row 3 fails), its JUnit XML, its CSV and its JSON summary."""
    tmp = tmp_path_factory.mktemp("ci")
    recipe = write(tmp, "ci-rows.yaml", ROWS_RECIPE)
    rows = write(tmp, "rows.csv", ROWS)
    proc = northstar(
        "run", str(recipe), "--params-file", str(rows), "--base-url", site_server.base_url,
        "--junit", "out/junit.xml", "--results", "out/results.csv", "--json",
        cwd=tmp, extra_env={"NORTHSTAR_SECRET_TOKEN": TOKEN}, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    summary = json.loads(proc.stdout)
    show = northstar("show", summary["run_id"], cwd=tmp)
    show_json = northstar("show", summary["run_id"], "--json", cwd=tmp)
    report = northstar("report", summary["run_id"], "--out", "report.html", cwd=tmp)
    assert report.returncode == 0, report.stderr
    return {
        "tmp": tmp,
        "proc": proc,
        "summary": summary,
        "show": show.stdout,
        "show_json": json.loads(show_json.stdout),
        "junit": (tmp / "out" / "junit.xml").read_text(encoding="utf-8"),
        "csv": (tmp / "out" / "results.csv").read_text(encoding="utf-8"),
        "report": (tmp / "report.html").read_text(encoding="utf-8"),
    }


@pytest.mark.parametrize("schema", ["ant-junit.xsd", "jenkins-junit-10.xsd"])
def test_the_junit_xml_validates_against_the_common_schemas(
    ran: dict[str, object], schema: str
) -> None:
    xmlschema.XMLSchema(SCHEMAS / schema).validate(str(ran["junit"]))


def test_each_row_is_a_test_case_named_by_its_values_and_the_failure_names_code_and_step(
    ran: dict[str, object],
) -> None:
    suite = ET.fromstring(str(ran["junit"])).find("testsuite")
    assert suite is not None
    counts = [suite.get(k) for k in ("tests", "failures", "errors", "skipped")]
    assert counts == ["5", "1", "0", "2"]
    cases = suite.findall("testcase")
    names = [case.get("name") for case in cases]
    assert names[0] == "row 1: name=Ann, title=Contact, token=[redacted]"
    assert names[2] == "row 3: name=Cy, title=Nowhere to be found, token=[redacted]"
    # A failed row stops the run: the rows after it are named and skipped, never dropped.
    assert names[4] == "row 5: name=Eve, title=Contact, token=[redacted]"
    assert [case.find("skipped") is not None for case in cases] == [False] * 3 + [True] * 2
    failed = [case for case in cases if case.find("failure") is not None]
    assert [case.get("name") for case in failed] == [names[2]]
    failure = failed[0].find("failure")
    assert failure is not None
    assert failure.get("type") == "EXPECTATION_FAILED"
    assert "at step check-title" in (failure.get("message") or "")
    assert "step check-title (tab site, verify_outcome)" in (failure.text or "")


def test_the_results_csv_has_each_rows_values_verdict_and_outputs_and_no_secret(
    ran: dict[str, object],
) -> None:
    table = list(csv.DictReader(str(ran["csv"]).splitlines()))
    assert [r["row"] for r in table] == ["1", "2", "3", "4", "5"]
    statuses = [r["status"] for r in table]
    assert statuses == ["verified", "verified", "failed", "not_started", "not_started"]
    assert [r["name"] for r in table] == ["Ann", "Bob", "Cy", "Dee", "Eve"]
    assert {r["token"] for r in table} == {"[redacted]"}
    assert (table[2]["code"], table[2]["step"]) == ("EXPECTATION_FAILED", "check-title")
    assert table[0]["output:shown"].endswith("/form")
    assert int(table[0]["duration_ms"]) > 0


def test_show_json_and_the_report_name_the_row_and_nothing_holds_the_secret(
    ran: dict[str, object],
) -> None:
    assert "row: name=Cy, title=Nowhere to be found, token=[redacted]" in str(ran["show"])
    shown = ran["show_json"]
    assert isinstance(shown, dict)
    assert shown["iterations"][2]["row"] == {
        "name": "Cy",
        "title": "Nowhere to be found",
        "token": "[redacted]",
    }
    summary = ran["summary"]
    assert isinstance(summary, dict)
    assert summary["iterations"][0]["row"]["name"] == "Ann"
    proc = ran["proc"]
    assert "<b>name</b> Cy<" in str(ran["report"])  # the report names the row too
    assert "<b>token</b> [redacted]<" in str(ran["report"])
    everything = [ran["junit"], ran["csv"], ran["show"], json.dumps(shown), ran["report"]]
    everything.append(proc.stdout)  # type: ignore[attr-defined]
    everything.append(proc.stderr)  # type: ignore[attr-defined]
    assert not [text for text in everything if TOKEN in str(text)]


def test_results_as_jsonl(tmp_path: Path, site: FixtureSite) -> None:
    recipe = write(tmp_path, "ci-rows.yaml", ROWS_RECIPE)
    rows = write(tmp_path, "rows.csv", "name,title\nAnn,Contact\n")
    proc = northstar(
        "run", str(recipe), "--params-file", str(rows), "--base-url", site.base_url,
        "--results", "results.jsonl",
        cwd=tmp_path, extra_env={"NORTHSTAR_SECRET_TOKEN": TOKEN},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (line,) = (tmp_path / "results.jsonl").read_text().splitlines()
    result = json.loads(line)
    assert (result["row"], result["status"]) == (1, "verified")
    assert result["values"] == {"name": "Ann", "title": "Contact", "token": "[redacted]"}


def test_a_target_that_cannot_be_written_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    recipe = write(tmp_path, "ci-rows.yaml", ROWS_RECIPE)
    (tmp_path / "there.xml").write_text("earlier results")
    (tmp_path / "link.csv").symlink_to(tmp_path / "elsewhere.csv")
    args = ("run", str(recipe), "-p", "name=a", "-p", "title=b", "--base-url", "http://127.0.0.1:9")
    env = {"NORTHSTAR_SECRET_TOKEN": TOKEN}
    for extra, says in (
        (("--junit", "there.xml"), "already exists"),
        (("--results", "link.csv"), "symbolic link"),
        (("--results", "results.txt"), ".csv or FILE.jsonl"),
    ):
        proc = northstar(*args, *extra, cwd=tmp_path, extra_env=env)
        assert proc.returncode == 2
        assert says in one_error_line(proc, "USAGE_INVALID").group(0)
    assert (tmp_path / "there.xml").read_text() == "earlier results"
    assert not (tmp_path / "journal.db").exists()  # nothing started
