"""The HTML run report: self-contained, escaped, built from the read-only views."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from northstar.browser.settings import show_trace_command
from northstar.journal import Journal
from northstar.journal.paths import run_artifacts_dir
from northstar.readers import IterationView, RunDetail, RunEvent, RunSummary, StepView
from northstar.readers.report import never_begun, number_ranges, readable, render_report

EVIL = '<script>alert("x")</script>'
PNG = (  # a 1x1 transparent PNG
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00"
    b"\x00\x00IEND\xaeB`\x82"
)


def step(step_id: str, status: str, **changes: object) -> StepView:
    fields: dict[str, object] = {
        "step_id": step_id,
        "tab": "site",
        "kind": "click",
        "seq": 0,
        "status": status,
        "effective_status": status,
        "started_at": None,
        "ended_at": None,
        "duration_ms": 12.0,
        "evidence": ({"expected": "url **/done", "passed": True, "found": "http://x/done"},),
        "error": None,
        "events": (),
    }
    fields.update(changes)
    return StepView(**fields)  # type: ignore[arg-type]


def iteration(
    number: int, state: str, steps: tuple[StepView, ...], **changes: object
) -> IterationView:
    fields: dict[str, object] = {
        "number": number,
        "state": state,
        "effective_state": state,
        "lane": 1,
        "params_fingerprint": "f",
        "started_at": None,
        "ended_at": None,
        "duration_ms": 1234.0,
        "reason_code": None,
        "reason": None,
        "failing_step": None,
        "evidence_count": 1,
        "model_calls": 0,
        "steps": steps,
    }
    fields.update(changes)
    return IterationView(**fields)  # type: ignore[arg-type]


def detail() -> RunDetail:
    summary = RunSummary(
        run_id="r-000000000001",
        recipe_name="demo",
        recipe_path=f"/recipes/{EVIL}.yaml",
        project="default",
        profile="",
        status="failed",
        effective_status="failed",
        total_iterations=2,
        iterations_recorded=2,
        iterations_verified=1,
        started_at="2026-01-01T00:00:00+00:00",
        ended_at="2026-01-01T00:00:05+00:00",
        heartbeat_at=None,
        worker_pid=None,
        worker_host=None,
    )
    failing = step(
        "send",
        "failed",
        error={"code": "TARGET_MISSING", "message": f"no element matches {EVIL}"},
    )
    iterations = (
        iteration(1, "verified", (step("open", "passed"),), outputs={"id": EVIL}),
        iteration(
            2,
            "failed",
            (step("open", "passed"), failing),
            reason_code="TARGET_MISSING",
            reason="no element matches",
            failing_step="send",
        ),
    )
    events = (
        RunEvent("2026-01-01T00:00:03+00:00", "loop_signal", {"iteration": 2, "kind": "repeat"}),
    )
    return RunDetail(summary, "d" * 64, "p", {"base_url": "http://x"}, iterations, events)


def test_the_report_embeds_screenshots_and_loads_nothing_from_outside(tmp_path: Path) -> None:
    (tmp_path / "iteration-0002-failure-site.png").write_bytes(PNG)
    (tmp_path / "iteration-0002-trace.zip").write_bytes(b"zip")
    page = render_report(detail(), tmp_path, generated_at="now")
    assert 'src="data:image/png;base64,' in page
    assert "failure screenshot, tab site" in page
    assert "playwright show-trace" in page
    assert not re.search(r"""(src|href)=["']?(https?:|//|file:)""", page)
    assert "<link" not in page
    # One inline script (the filter and search), allowed by its hash and nothing else.
    assert len(re.findall(r"<script\b", page)) == 1
    assert not re.search(r"<script[^>]*\bsrc=", page)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    assert "default-src 'none'" in policy[1]
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/=]+'$", policy[1])


def test_everything_from_the_journal_is_escaped(tmp_path: Path) -> None:
    page = render_report(detail(), tmp_path)
    assert EVIL not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page


def test_each_iteration_shows_its_verdict_reason_and_signals(tmp_path: Path) -> None:
    page = render_report(detail(), tmp_path)
    assert 'id="iteration-1" data-verdict="verified"' in page
    assert 'id="iteration-2" data-verdict="failed"' in page
    assert "TARGET_MISSING at step send: no element matches" in page
    assert "loop_signal: iteration=2, kind=repeat" in page


def test_a_run_without_signals_says_so(tmp_path: Path) -> None:
    quiet = detail()
    quiet = RunDetail(quiet.summary, "d", "p", {}, quiet.iterations, ())
    assert "No loop signal was recorded" in render_report(quiet, tmp_path / "missing")


def test_the_report_finds_the_artifacts_where_the_run_wrote_them(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "journal.db") as journal:
        assert run_artifacts_dir(journal.path, "r-1") == tmp_path / "runs" / "r-1"


def test_failed_iterations_come_first_and_open_verified_ones_closed(tmp_path: Path) -> None:
    page = render_report(detail(), tmp_path)
    failed = page.index(
        '<details class="card iteration" id="iteration-2" data-verdict="failed" open>'
    )
    verified = page.index(
        '<details class="card iteration" id="iteration-1" data-verdict="verified">'
    )
    assert failed < verified


def test_screenshots_link_to_the_full_file_and_the_trace_has_its_command(tmp_path: Path) -> None:
    artifacts = tmp_path / "runs" / "r-1"
    artifacts.mkdir(parents=True)
    (artifacts / "iteration-0002-failure-site.png").write_bytes(PNG)
    (artifacts / "iteration-0002-trace.zip").write_bytes(b"zip")
    page = render_report(detail(), artifacts, page_dir=tmp_path / "out")
    assert '<a href="../runs/r-1/iteration-0002-failure-site.png" target="_blank"' in page
    assert '<a href="../runs/r-1/iteration-0002-trace.zip">iteration-0002-trace.zip</a>' in page
    trace = (artifacts / "iteration-0002-trace.zip").resolve()
    assert f"<code>{show_trace_command(trace)}</code>" in page
    beside = render_report(detail(), artifacts)  # the default place: the artifacts folder
    assert '<a href="iteration-0002-failure-site.png"' in beside


def test_iterations_that_never_started_are_listed_as_ranges(tmp_path: Path) -> None:
    run = detail()
    stopped = RunDetail(replace(run.summary, total_iterations=20), "d", "p", {}, run.iterations, ())
    assert never_begun(stopped) == list(range(3, 21))
    assert "Never started: iterations 3–20 (18 of 20); the run stopped first." in render_report(
        stopped, tmp_path
    )
    assert number_ranges([1, 2, 3, 5, 7, 8]) == "1–3, 5, 7–8"
    assert "Never started" not in render_report(run, tmp_path)


def test_the_filter_offers_each_status_present_and_a_search(tmp_path: Path) -> None:
    page = render_report(detail(), tmp_path)
    radios = re.findall(r'<input type="radio" name="status" value="([a-z_]*)"', page)
    assert radios == ["", "failed", "verified"]  # all, then each status the run has
    assert re.search(r"failed <span class=\"count\">\(1\)</span>", page)
    assert '<input type="search" name="q"' in page
    assert '<output class="shown"' in page


def test_values_are_readable_text_not_reprs_or_json(tmp_path: Path) -> None:
    run = detail()
    options = {"base_url": "http://x", "monitor": False, "tags": ["a", "b"], "none": None}
    run = replace(run, options=options)
    named = replace(run.iterations[1], row={"name": "Ann", "token": "[redacted]"})
    run = replace(run, iterations=(run.iterations[0], named))
    page = render_report(run, tmp_path)
    assert "base_url: http://x; monitor: no; tags: a, b; none: -" in page
    assert "{&#34;" not in page  # no JSON object
    assert "[&#39;" not in page  # no Python list
    assert "<b>name</b> Ann" in page  # the row, in the iteration's summary line
    assert readable({"a": [1, True]}) == "a: 1, yes"
