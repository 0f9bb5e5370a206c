"""The ``northstar`` command as a person meets it: a separate process, its output and exit code.

Exit codes: 0 verified, 1 not verified, 2 bad input (nothing started). Every expected error
is one line, ``error[CODE] where: message (fix: ...)``, and never a traceback. Each process
gets its own journal under ``tmp_path`` and runs there, so nothing is written to the repo.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from tests.conftest import RECIPES

# The console script's entry point, run by this interpreter (no PATH or activation needed).
ENTRY = "from northstar.__main__ import main; main()"

ERROR_LINE = re.compile(r"^error\[(?P<code>[A-Z_]+)\] (?P<body>.+) \(fix: (?P<fix>.+)\)$")
SECRET = "pw-7c1d-not-for-logs"


def northstar(
    *args: str, cwd: Path, extra_env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in ``cwd`` with a journal there and no NORTHSTAR_* settings inherited."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
    env["NORTHSTAR_JOURNAL"] = str(cwd / "journal.db")
    env |= extra_env or {}
    return subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def one_error_line(proc: subprocess.CompletedProcess[str], code: str) -> re.Match[str]:
    """The process failed with exactly one error line of ``code`` and no traceback."""
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    match = ERROR_LINE.match(lines[0])
    assert match is not None, lines[0]
    assert match["code"] == code, lines[0]
    return match


# Runs against the fixture site (a real browser in the child process)

FAILING = """
name: failing
timeout: 500
params:
  password: {type: string, secret: true, required: true}
tabs:
  site: {start: "{{ base_url }}/login"}
steps:
  - id: password
    tab: site
    timeout: 5000
    fill: {target: {label: Password}, value: "{{ password }}"}
  - id: wrong-title
    tab: site
    verify_outcome: {title: {equals: Dashboard}}
"""


@pytest.mark.browser
def test_verified_run_exits_0_with_a_line_per_step(tmp_path: Path, site: FixtureSite) -> None:
    proc = northstar(
        "run",
        str(RECIPES / "publish-post.yaml"),
        "--base-url",
        site.base_url,
        "-p",
        "title=From the CLI",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    for step in ("title", "publish", "open-post", "post-number", "done_when"):
        assert re.search(rf"^\s+ok\s+{re.escape(step)}\s", proc.stdout, re.M), proc.stdout
    assert "output post_number = 1" in proc.stdout
    assert "iteration 1: verified" in proc.stdout
    assert site.submission_count("post") == 1


@pytest.mark.browser
def test_not_verified_run_exits_1_and_json_says_so(tmp_path: Path, site: FixtureSite) -> None:
    recipe = write(tmp_path, "failing.yaml", FAILING)
    args = ("run", str(recipe), "--base-url", site.base_url, "-p", f"password={SECRET}")
    proc = northstar(*args, "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    summary = json.loads(proc.stdout)
    assert "verified" in summary
    assert not summary["verified"]
    (iteration,) = summary["iterations"]
    assert iteration["verified"] is False
    assert (iteration["reason_code"], iteration["failing_step"]) == (
        "EXPECTATION_FAILED",
        "wrong-title",
    )
    assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.browser
def test_not_verified_run_prints_the_failing_step(tmp_path: Path, site: FixtureSite) -> None:
    recipe = write(tmp_path, "failing.yaml", FAILING)
    args = ("run", str(recipe), "--base-url", site.base_url, "-p", f"password={SECRET}")
    proc = northstar(*args, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert re.search(r"^\s+FAIL\s+wrong-title\s.*EXPECTATION_FAILED", proc.stdout, re.M)
    assert "NOT verified" in proc.stdout
    assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.browser
def test_json_summary_of_a_verified_run(tmp_path: Path, site: FixtureSite) -> None:
    proc = northstar(
        "run",
        str(RECIPES / "paginate.yaml"),
        "--base-url",
        site.base_url,
        "--json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["verified"]
    (iteration,) = summary["iterations"]
    assert iteration["verified"] is True
    assert iteration["outputs"]["item_number"] == "12"
    assert iteration["evidence_count"] > 0


def test_missing_browser_is_one_error_line(tmp_path: Path, site: FixtureSite) -> None:
    proc = northstar(
        "run",
        str(RECIPES / "paginate.yaml"),
        "--base-url",
        site.base_url,
        "--browser",
        str(tmp_path / "no-such-chromium"),
        cwd=tmp_path,
    )
    assert proc.returncode != 0
    match = one_error_line(proc, "BROWSER_NOT_FOUND")
    assert "no-such-chromium" in match["body"]


# Bad input: exit 2, one line, nothing started (no browser, no site needed)

GOOD_HEAD = 'name: bad\ntabs:\n  site: {start: "http://127.0.0.1:1/"}\n'


def test_yaml_syntax_error(tmp_path: Path) -> None:
    recipe = write(tmp_path, "syntax.yaml", GOOD_HEAD + "steps: [\n  - {id: a, tab: site\n")
    proc = northstar("run", str(recipe), cwd=tmp_path)
    assert proc.returncode == 2
    match = one_error_line(proc, "RECIPE_INVALID")
    assert re.match(rf"{re.escape(str(recipe))}:\d+:\d+: YAML syntax error: ", match["body"])


def test_schema_error_names_the_field_path_and_position(tmp_path: Path) -> None:
    steps = (
        "steps:\n"
        "  - id: first\n"
        "    tab: site\n"
        "    goto: /\n"
        "  - id: second\n"
        "    tab: site\n"
        "    click: {target: {}}\n"
    )
    recipe = write(tmp_path, "schema.yaml", GOOD_HEAD + steps)
    proc = northstar("run", str(recipe), cwd=tmp_path)
    assert proc.returncode == 2
    match = one_error_line(proc, "RECIPE_INVALID")
    assert match["body"].startswith(f"{recipe}:10:13: steps[1].click.target: ")
    assert "exactly one of role, label" in match["body"]


def test_unknown_field_suggests_the_right_one(tmp_path: Path) -> None:
    steps = "steps:\n  - id: first\n    tab: site\n    goto: /\n    exepct: []\n"
    recipe = write(tmp_path, "typo.yaml", GOOD_HEAD + steps)
    proc = northstar("run", str(recipe), cwd=tmp_path)
    assert proc.returncode == 2
    match = one_error_line(proc, "RECIPE_INVALID")
    assert match["body"].startswith(f"{recipe}:8:5: steps[0].exepct: ")
    assert "`expect`" in match["body"]


TEMPLATE_TYPO = GOOD_HEAD + 'steps:\n  - id: first\n    tab: site\n    goto: "/{{ titel }}"\n'


def test_unknown_template_name(tmp_path: Path) -> None:
    recipe = write(tmp_path, "template.yaml", TEMPLATE_TYPO)
    proc = northstar("run", str(recipe), cwd=tmp_path)
    assert proc.returncode == 2
    match = one_error_line(proc, "RECIPE_INVALID")
    assert match["body"].startswith(f"{recipe}")
    assert "steps[0].goto: unknown name {{ titel }}" in match["body"]


def test_unknown_template_name_has_a_position(tmp_path: Path) -> None:
    recipe = write(tmp_path, "template.yaml", TEMPLATE_TYPO)
    proc = northstar("run", str(recipe), cwd=tmp_path)
    match = one_error_line(proc, "RECIPE_INVALID")
    assert match["body"].startswith(f"{recipe}:7:5: steps[0].goto: ")


def test_missing_required_param(tmp_path: Path) -> None:
    recipe = str(RECIPES / "publish-post.yaml")
    proc = northstar("run", recipe, "--base-url", "http://127.0.0.1:1", cwd=tmp_path)
    assert proc.returncode == 2
    match = one_error_line(proc, "PARAM_MISSING")
    assert "'title'" in match["body"]
    assert "-p NAME=VALUE" in match["fix"]


def test_wrong_type_param(tmp_path: Path) -> None:
    recipe = str(RECIPES / "delayed-report.yaml")
    args = ("run", recipe, "--base-url", "http://127.0.0.1:1", "-p", "delay_ms=soon")
    proc = northstar(*args, cwd=tmp_path)
    assert proc.returncode == 2
    match = one_error_line(proc, "PARAM_INVALID")
    assert "'delay_ms' must be integer" in match["body"]


def test_wrong_type_secret_param_does_not_echo_it(tmp_path: Path) -> None:
    recipe = write(
        tmp_path,
        "pin.yaml",
        GOOD_HEAD.replace("tabs:", "params:\n  pin: {type: integer, secret: true}\ntabs:")
        + "steps:\n  - {id: first, tab: site, goto: /}\n",
    )
    proc = northstar("run", str(recipe), "-p", f"pin={SECRET}", cwd=tmp_path)
    assert proc.returncode == 2
    one_error_line(proc, "PARAM_INVALID")
    assert SECRET not in proc.stderr + proc.stdout


# validate and schema


def test_validate_every_example(tmp_path: Path) -> None:
    examples = sorted(str(p) for p in RECIPES.glob("*.yaml"))
    proc = northstar("validate", *examples, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [line.split(":")[0] for line in proc.stdout.splitlines()] == [
        f"ok {path}" for path in examples
    ]


def test_validate_reports_each_bad_file_and_exits_2(tmp_path: Path) -> None:
    bad = write(tmp_path, "template.yaml", TEMPLATE_TYPO)
    good = str(RECIPES / "delayed-report.yaml")  # no lint warnings: stderr is the error alone
    proc = northstar("validate", good, str(bad), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout.startswith(f"ok {good}: delayed-report v1")
    one_error_line(proc, "RECIPE_INVALID")


def test_schema_is_the_recipe_json_schema(tmp_path: Path) -> None:
    proc = northstar("schema", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    assert {"name", "tabs", "steps", "params", "outputs", "done_when"} <= set(schema["properties"])
    assert set(schema["required"]) >= {"name", "tabs", "steps"}
