"""A run as one self-contained HTML page: ``northstar report RUN_ID``.

The page is built from the read-only journal views (``northstar.readers``) and the
run's artifacts folder, nothing else: it cannot start or change a run. It has no
external resources (inline CSS and script, screenshots as ``data:`` URIs) and a
Content-Security-Policy that allows only its own inline script by hash, so it can be
mailed or attached to a ticket as one file. The markup is a Jinja2 template
(``templates/report.html.j2``) with autoescape on: every value from the journal is escaped
by the engine, not by each line that writes HTML, and secret values never reach it because
the journal is scrubbed before it is written.

A person finds an iteration with a filter by status and a search over each iteration's
row, steps, reason and outputs (a few lines of inline script; without script every
iteration is shown). Values are shown as text a person reads (``key: value``), never as
Python reprs or raw JSON.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, cached_property
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from northstar.browser.settings import show_trace_command
from northstar.readers import IterationView, RunDetail, RunEvent
from northstar.readers.artifacts import ArtifactFiles
from northstar.results import ACTED_ON

__all__ = [
    "SIGNAL_EVENTS",
    "failed_first",
    "never_begun",
    "number_ranges",
    "readable",
    "render_report",
]

# Journal events that carry a BehaviorMonitor's advice (see northstar.logs.EVENTS).
SIGNAL_EVENTS = frozenset({"loop_signal", "loop_signal_cleared"})

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232b;
background:#f4f6f8}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 10px}
h3{font-size:15px;margin:0;display:flex;gap:10px;align-items:center}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:12px 0 0}
dl.facts dt{color:#5b6673}dl.facts dd{margin:0}
.card{background:#fff;border:1px solid #dfe3e8;border-radius:8px;padding:14px 16px;margin:0 0 14px}
.badge{display:inline-block;border-radius:999px;padding:1px 10px;font-size:12px;font-weight:600;
text-transform:uppercase;letter-spacing:.03em;background:#e6e9ed;color:#39424e}
.verified,.passed{background:#dcf5e3;color:#136c2e}
.failed,.interrupted{background:#fde2e1;color:#a3211b}
.needs_review,.unknown,.blocked,.stopped,.running{background:#fff1cc;color:#7a5300}
table{border-collapse:collapse;width:100%;margin:10px 0 4px}
th,td{text-align:left;vertical-align:top;padding:5px 8px;border-bottom:1px solid #eef0f3}
th{font-size:12px;color:#5b6673;font-weight:600}
td.num,td.time{text-align:right;white-space:nowrap}
.reason{margin:8px 0 0;padding:8px 10px;background:#fff6f5;border-left:3px solid #d9443b}
ul.evidence{margin:0;padding-left:16px}ul.evidence li.fail{color:#a3211b}
.error{color:#a3211b}
details.iteration>summary{cursor:pointer;list-style-position:outside;margin-left:14px}
details.iteration:not([open]){padding:5px 16px;margin:0 0 4px}
h2 small,h3 .count{font-weight:400;color:#5b6673;font-size:13px}
figure{margin:12px 12px 0 0;display:inline-block;max-width:min(100%,360px);vertical-align:top}
figure img{max-width:100%;border:1px solid #dfe3e8;border-radius:4px}
figcaption{font-size:12px;color:#5b6673}
footer{color:#5b6673;font-size:12px;margin:24px 0}
form.filter{display:flex;flex-wrap:wrap;gap:8px 18px;align-items:center;padding:8px 16px}
form.filter fieldset{border:0;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px 12px}
form.filter legend{float:left;margin-right:6px;color:#5b6673}
form.filter input[type=search]{font:inherit;padding:3px 8px;min-width:18em}
form.filter output{color:#5b6673;font-size:13px}
h3 .row{display:flex;flex-wrap:wrap;gap:2px 12px;font-weight:400;font-size:13px}
h3 .row b{font-weight:600;color:#5b6673;margin-right:4px}
"""

# The filter and the search: hide the cards that do not match, and say how many are shown.
_SCRIPT = """
(() => {
  const form = document.querySelector("form.filter");
  const cards = [...document.querySelectorAll("details.iteration")];
  const none = document.querySelector(".none-shown");
  const update = () => {
    const status = form.elements.status.value;
    const words = form.elements.q.value.toLowerCase().split(/\\s+/).filter(Boolean);
    let shown = 0;
    for (const card of cards) {
      const text = card.textContent.toLowerCase();
      const match = (!status || card.dataset.verdict === status)
        && words.every((word) => text.includes(word));
      card.hidden = !match;
      shown += match;
    }
    form.querySelector("output").textContent = `showing ${shown} of ${cards.length}`;
    none.hidden = shown > 0;
  };
  form.addEventListener("input", update);
  update();
})();
"""


def render_report(
    detail: RunDetail,
    artifacts: Path,
    *,
    generated_at: str | None = None,
    page_dir: Path | None = None,
) -> str:
    """The whole HTML page for ``detail``; ``artifacts`` may not exist (nothing to embed).

    ``page_dir`` is the folder the page is written to (default: ``artifacts``): links to
    full-size screenshots and traces are relative to it, so they work wherever both are.
    """
    signals = [event for event in detail.events if event.name in SIGNAL_EVENTS]
    files = _Files(artifacts, page_dir or artifacts)
    iterations = failed_first(detail.iterations)
    return _template().render(
        run=detail.summary,
        facts=_facts(detail),
        iterations=[_card(it, files, _of_iteration(signals, it.number)) for it in iterations],
        states=sorted(Counter(it.effective_state for it in iterations).items()),
        omitted=detail.omitted_iterations,
        not_started=_not_started(detail),
        signals=signals,
        events=[e for e in detail.events if e.name not in SIGNAL_EVENTS],
        stamp=generated_at or datetime.now(UTC).isoformat(timespec="seconds"),
        css=_CSS,
        script=_SCRIPT,
        csp=_CSP,
        acted_on=ACTED_ON,
    )


@cache
def _template() -> jinja2.Template:
    """The page's template, loaded once; autoescape makes every value text, not markup."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("northstar.readers", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    environment.filters.update(readable=readable, pairs=_pairs, ms=_ms)
    return environment.get_template("report.html.j2")


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


# Nothing loads from anywhere: images only as data: URIs, style and script only inline.
_CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
    f"script-src {_script_hash(_SCRIPT)}"
)


def readable(value: object) -> str:
    """A journal value as a person reads it: ``key: value`` pairs, lists joined, no reprs."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {readable(v)}" for k, v in value.items()) or "-"
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(readable(v) for v in value) or "-"
    return str(value)


def _pairs(payload: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={readable(v)}" for k, v in sorted(payload.items()))


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def failed_first(iterations: Sequence[IterationView]) -> list[IterationView]:
    """The iterations a reader needs first (not verified), then the verified ones, by number."""
    return sorted(iterations, key=lambda it: (it.effective_state == "verified", it.number))


def never_begun(detail: RunDetail) -> list[int]:
    """Iteration numbers the run asked for that the journal never recorded."""
    recorded = {it.number for it in detail.iterations}
    # A bounded read counts the verified iterations it left out: the last one read is the
    # highest recorded, so only numbers after it can be missing for certain.
    first = max(recorded, default=0) + 1 if detail.omitted_iterations else 1
    return [n for n in range(first, detail.summary.total_iterations + 1) if n not in recorded]


def number_ranges(numbers: Sequence[int]) -> str:
    """``[4, 5, 6, 9]`` as ``4–6, 9``: a long stop stays one short line."""
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)


@dataclass(frozen=True)
class _Files:
    """Where a run's files are, and where the page that links to them is written."""

    artifacts: Path
    page_dir: Path

    @cached_property
    def listing(self) -> ArtifactFiles:
        """The run's folder listed once for the whole page (a long run's holds many files)."""
        return ArtifactFiles(self.artifacts)

    def href(self, file: Path) -> str:
        return quote(Path(os.path.relpath(file.resolve(), self.page_dir.resolve())).as_posix())


def _facts(detail: RunDetail) -> list[tuple[str, object]]:
    run = detail.summary
    return [
        ("recipe", f"{run.recipe_name} ({run.recipe_path})"),
        ("verified", f"{run.iterations_verified} of {run.total_iterations} iterations"),
        ("project", run.project),
        ("profile", run.profile or "-"),
        ("definition", detail.definition_hash),
        ("started", run.started_at),
        ("ended", run.ended_at or "-"),
        ("options", detail.options),
        *_probe_facts(detail),
    ]


def _probe_facts(detail: RunDetail) -> list[tuple[str, str]]:
    """Each reconcile probe's latest positive control: proven, or blind and what it saw."""
    return [
        (
            f"probe of {control.step_id}",
            f"proven {control.checked_at}"
            if control.proven
            else f"BLIND (cannot prove absence): {control.detail}",
        )
        for control in detail.probe_controls
    ]


def _not_started(detail: RunDetail) -> str:
    numbers = never_begun(detail)
    if not numbers:
        return ""
    total = detail.summary.total_iterations
    plural = "s" if len(numbers) > 1 else ""
    return (
        f"Never started: iteration{plural} {number_ranges(numbers)} "
        f"({len(numbers)} of {total}); the run stopped first."
    )


def _card(iteration: IterationView, files: _Files, signals: Sequence[RunEvent]) -> dict[str, Any]:
    """What the template shows of one iteration (the search looks in the card's text)."""
    return {
        "view": iteration,
        "reason": _reason_text(iteration),
        "screenshots": _screenshots(files, iteration.number),
        "trace": _trace(files, iteration.number),
        "signals": signals,
    }


def _reason_text(iteration: IterationView) -> str:
    if not iteration.reason_code:
        return ""
    where = f" at step {iteration.failing_step}" if iteration.failing_step else ""
    return f"{iteration.reason_code}{where}: {iteration.reason or ''}"


def _screenshots(files: _Files, number: int) -> list[dict[str, str]]:
    """Thumbnails embedded in the page, each a link to the full-size file beside it."""
    shots = []
    for png in files.listing.of(number).screenshots:
        moment_role = png.stem.removeprefix(f"iteration-{number:04d}-")
        moment, _, role = moment_role.partition("-")
        shots.append(
            {
                "href": files.href(png),
                "caption": f"{moment} screenshot, tab {role}" if role else moment_role,
                "data": base64.b64encode(png.read_bytes()).decode("ascii"),
            }
        )
    return shots


def _trace(files: _Files, number: int) -> dict[str, str] | None:
    trace = files.listing.of(number).trace
    if trace is None:
        return None
    return {"href": files.href(trace), "name": trace.name, "command": show_trace_command(trace)}


def _of_iteration(events: Iterable[RunEvent], number: int) -> list[RunEvent]:
    return [event for event in events if event.payload.get("iteration") == number]
