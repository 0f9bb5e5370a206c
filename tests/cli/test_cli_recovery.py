"""``northstar reconcile`` and ``resume`` as a person meets them while a save is still settling.

A separate process per command, against the fixture site with the post held (saved later
than the step waited). The real clock and the default settle period (60 s) apply: the
reconcile right after the run is early by construction.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from fixtures.site_server import FixtureSite
from tests.cli.test_cli_run import northstar, one_error_line, write

pytestmark = pytest.mark.browser

HELD_POST = """
name: held-post
params:
  title: {type: string, required: true}
tabs:
  admin: {start: "{{ base_url }}/posts/new"}
steps:
  - id: title
    tab: admin
    fill: {target: {label: Title}, value: "{{ title }}"}
  - id: publish
    tab: admin
    timeout: 2000
    click: {target: {role: button, name: Publish, exact: true}}
    effect: submit
    expect: [{url: "**/posts?created=*"}]
    reconcile:
      - goto: "/posts?q={{ title }}"
      - check: {visible: {role: link, name: "{{ title }}", exact: true}}
"""

SETTLING = re.compile(
    r"^iteration 1: unknown \[OUTCOME_SETTLING\] submission 'publish' not found yet; its "
    r"absence cannot be proven before (?P<at>\S+) \(sent (?P<sent>\S+), settle 60 s\): "
    r"reconcile again then \[publish: settling\]$",
    re.M,
)


def test_an_early_reconcile_says_when_it_can_decide_and_resume_refuses(
    tmp_path: Path, site: FixtureSite
) -> None:
    recipe = write(tmp_path, "held.yaml", HELD_POST)
    site.hold("/posts")
    ran = northstar(
        "run", str(recipe), "--base-url", site.base_url, "-p", "title=Held", cwd=tmp_path
    )
    assert ran.returncode == 4, ran.stderr
    run_id = re.search(r"run (r-[0-9a-f]{12})", ran.stderr)
    assert run_id is not None, ran.stderr

    early = northstar("reconcile", run_id[1], "-p", "title=Held", cwd=tmp_path)
    assert early.returncode == 4, early.stdout + early.stderr
    line = SETTLING.search(early.stdout)
    assert line is not None, early.stdout
    at, sent = datetime.fromisoformat(line["at"]), datetime.fromisoformat(line["sent"])
    assert at == sent + timedelta(seconds=60)
    assert f"run {run_id[1]}: blocked; reconcile again from {line['at']}" in early.stdout

    refused = northstar("resume", run_id[1], "-p", "title=Held", cwd=tmp_path)
    assert refused.returncode == 4
    error = one_error_line(refused, "OUTCOME_SETTLING")
    assert line["at"] in error["body"]
    site.release_held(save=False)
    assert site.submission_count("post") == 0
