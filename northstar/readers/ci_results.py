"""A run's iterations as files a CI system reads: JUnit XML and a results table.

``run --junit FILE`` and ``run --results FILE.csv|.jsonl`` write these once the run has
ended, from the journal alone (like ``show`` and the report), so what CI shows is what the
journal holds: each iteration named by its row (the values it ran with, secrets already
``[redacted]`` when the journal was written), its verdict, the failure's code, message and
step, its outputs and its duration.

JUnit has no standard, only what its readers accept. The XML here is one ``testsuites``
with one ``testsuite`` (the recipe) and one ``testcase`` per iteration, and it satisfies
both schemas CI tools are checked against: the Ant schema (strict: ``properties``,
``system-out`` and ``system-err`` present, a time-zone-free timestamp, one outcome per
test case) and Jenkins' ``junit-10.xsd``. The mapping of verdicts:

- ``verified``: a passing test case;
- ``failed``: ``<failure>`` (a check on the page did not hold);
- ``needs_review`` and ``unknown``: ``<error>`` (nobody knows yet whether it worked);
- ``stopped``, never started, or still running: ``<skipped>``.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from northstar.readers.report import never_begun
from northstar.readers.views import IterationView, RunDetail, StepView

__all__ = [
    "RESULT_COLUMNS",
    "PlannedRow",
    "ResultRow",
    "junit_xml",
    "result_rows",
    "results_csv",
    "results_jsonl",
    "testcase_name",
]

# The fixed columns of a results CSV; a parameter of the same name becomes ``param:NAME``.
RESULT_COLUMNS = ("row", "status", "code", "step", "message", "duration_ms")
_NAME_WIDTH = 200  # a test case's name stays one readable line in a CI's list
# Characters XML 1.0 cannot hold at all, not even escaped: a page's text may contain them.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_FAILED = frozenset({"failed"})
_ERRORED = frozenset({"needs_review", "unknown"})


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One iteration as a line of the results file (``status`` ``not_started`` if never run)."""

    row: int
    status: str
    code: str | None = None
    step: str | None = None
    message: str | None = None
    duration_ms: float | None = None
    values: dict[str, str] | None = None
    outputs: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "row": self.row,
            "status": self.status,
            "code": self.code,
            "step": self.step,
            "message": self.message,
            "duration_ms": self.duration_ms,
            "values": self.values or {},
            "outputs": self.outputs or {},
        }


# The values an iteration was to run with (secrets redacted), for one the journal never began:
# the process that started the run knows its rows; a later reader passes none.
PlannedRow = Callable[[int], dict[str, str] | None]


def _no_plan(number: int) -> None:
    return None


def result_rows(detail: RunDetail, planned: PlannedRow = _no_plan) -> list[ResultRow]:
    """Every iteration the run asked for, in order; those never begun say ``not_started``."""
    rows = [_result_row(it) for it in detail.iterations]
    rows.extend(
        ResultRow(number, "not_started", values=planned(number)) for number in never_begun(detail)
    )
    return sorted(rows, key=lambda r: r.row)


def _result_row(iteration: IterationView) -> ResultRow:
    return ResultRow(
        row=iteration.number,
        status=iteration.effective_state,
        code=iteration.reason_code,
        step=iteration.failing_step,
        message=iteration.reason,
        duration_ms=iteration.duration_ms,
        values=iteration.row,
        outputs=dict(iteration.outputs),
    )


def results_jsonl(detail: RunDetail, planned: PlannedRow = _no_plan) -> str:
    """One JSON object per iteration and line: values and outputs as nested objects."""
    rows = result_rows(detail, planned)
    return "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n" for r in rows)


def results_csv(detail: RunDetail, planned: PlannedRow = _no_plan) -> str:
    """A table with the fixed columns, then one per parameter, then ``output:NAME`` ones.

    Parameter columns keep their names, so the failed rows can be given back to ``run
    --params-file`` (Northstar's own columns are then extra columns to ignore).
    """
    rows = result_rows(detail, planned)
    params = _ordered(name for r in rows for name in (r.values or {}))
    outputs = _ordered(name for r in rows for name in (r.outputs or {}))
    header = [*RESULT_COLUMNS, *(_param_column(p) for p in params)]
    header += [f"output:{o}" for o in outputs]
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    for r in rows:
        fixed = [r.row, r.status, r.code, r.step, r.message, _duration(r.duration_ms)]
        values = [(r.values or {}).get(p, "") for p in params]
        writer.writerow([*fixed, *values, *((r.outputs or {}).get(o, "") for o in outputs)])
    return text.getvalue()


def _param_column(name: str) -> str:
    return f"param:{name}" if name in RESULT_COLUMNS else name


def _ordered(names: Iterator[str]) -> list[str]:
    """Names in the order they first appear (the recipe's order), each once."""
    return list(dict.fromkeys(names))


def _duration(ms: float | None) -> str:
    return "" if ms is None else f"{ms:.0f}"


def testcase_name(iteration: int, values: dict[str, str] | None) -> str:
    """``row 3: title=Hello, email=ann@example.com``: the row a CI's list shows."""
    if not values:
        return f"iteration {iteration}"
    pairs = ", ".join(f"{k}={v}" for k, v in values.items())
    name = f"row {iteration}: {pairs}"
    return name if len(name) <= _NAME_WIDTH else name[: _NAME_WIDTH - 1] + "…"


def junit_xml(
    detail: RunDetail, planned: PlannedRow = _no_plan, *, hostname: str = "localhost"
) -> str:
    """The run as JUnit XML (one test suite, one test case per iteration the run asked for)."""
    run = detail.summary
    rows = result_rows(detail, planned)
    steps = {it.number: it.steps for it in detail.iterations}
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", _suite_attributes(detail, rows, hostname))
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("run_id", run.run_id),
        ("recipe", run.recipe_path),
        ("definition_hash", detail.definition_hash),
        ("status", run.effective_status),
    ):
        ET.SubElement(properties, "property", {"name": name, "value": _clean(value)})
    for r in rows:
        _testcase(suite, run.recipe_name, r, steps.get(r.row, ()))
    ET.SubElement(suite, "system-out").text = f"details: northstar show {run.run_id}"
    ET.SubElement(suite, "system-err").text = ""
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, "unicode") + "\n"


def _suite_attributes(detail: RunDetail, rows: Sequence[ResultRow], host: str) -> dict[str, str]:
    run = detail.summary
    return {
        "name": _clean(run.recipe_name),
        "package": _clean(run.recipe_name),
        "id": "0",
        "timestamp": _timestamp(run.started_at),
        "hostname": _clean(host) or "localhost",
        "tests": str(len(rows)),
        "failures": str(sum(r.status in _FAILED for r in rows)),
        "errors": str(sum(r.status in _ERRORED for r in rows)),
        "skipped": str(sum(_skipped(r.status) for r in rows)),
        "time": _seconds(sum(r.duration_ms or 0.0 for r in rows)),
    }


def _testcase(parent: ET.Element, recipe: str, r: ResultRow, steps: Sequence[StepView]) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        {
            "name": _clean(testcase_name(r.row, r.values)),
            "classname": _clean(recipe),
            "time": _seconds(r.duration_ms or 0.0),
        },
    )
    if r.status in _FAILED or r.status in _ERRORED:
        tag = "failure" if r.status in _FAILED else "error"
        problem = ET.SubElement(case, tag, {"type": r.code or r.status, "message": _message(r)})
        problem.text = _clean(_failure_text(r, steps))
    elif _skipped(r.status):
        ET.SubElement(case, "skipped", {"message": _skip_reason(r)})


def _skipped(status: str) -> bool:
    return status != "verified" and status not in _FAILED and status not in _ERRORED


def _skip_reason(r: ResultRow) -> str:
    if r.status == "not_started":
        return "never started: the run stopped first"
    return _clean(f"{r.status}: {r.message}" if r.message else r.status)


def _message(r: ResultRow) -> str:
    where = f" at step {r.step}" if r.step else ""
    return _clean(f"{r.code or r.status}{where}: {r.message or ''}".rstrip(": "))


def _failure_text(r: ResultRow, steps: Sequence[StepView]) -> str:
    """The failing step (id, tab, kind), its error and the checks that did not hold."""
    lines = [_message(r)]
    for step in steps:
        if step.step_id != r.step and step.effective_status != "failed":
            continue
        lines.append(f"step {step.step_id} (tab {step.tab}, {step.kind}): {step.effective_status}")
        lines.extend(f"  expected {_evidence(e)}" for e in step.evidence if not e.get("passed"))
        if step.error:
            lines.append(f"  {step.error.get('code', '?')}: {step.error.get('message', '')}")
    if r.values:
        lines.append("row: " + ", ".join(f"{k}={v}" for k, v in r.values.items()))
    return "\n".join(lines)


def _evidence(evidence: dict[str, Any]) -> str:
    found = evidence.get("found")
    return f"{evidence.get('expected', '')}" + (f", found {found}" if found else "")


def _timestamp(started_at: str) -> str:
    """The Ant schema's form: seconds, no time zone (UTC is meant)."""
    try:
        moment = datetime.fromisoformat(started_at)
    except ValueError:
        return "1970-01-01T00:00:00"
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


def _clean(text: object) -> str:
    """Text XML 1.0 can carry: characters it cannot hold at all are left out."""
    return _NOT_XML.sub("", "" if text is None else str(text))
