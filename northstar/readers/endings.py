"""How a run ended, as the journal holds it: the table of endings and the one reading of it.

Every front end ends a run with the same facts: the CLI's last lines and its exit status,
``run --json``, the Python API's ``RunResult``, the MCP ``call_program`` answer, ``run
--queue`` and a distributed worker's log. They all get a ``RunEnding`` from
``read_ending`` (the journal, read-only, after the run) and none counts anything itself,
so they cannot disagree with each other or with ``northstar show``.

``ENDINGS`` is the table of ways a run ends. A row names the stop codes and run statuses
that mean it, the exit status, and what a person does next; ``ending_for`` picks the row
for a run's facts and ``ending_for_error`` the row for an error that ended a command
before (or instead of) a run. A new ending is one more row: the reading, the text and the
documentation table (``docs/drafts/run-endings.md``, checked by a test) follow it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from northstar.errors import NorthstarError, error_class_for_code
from northstar.journal.paths import run_artifacts_dir
from northstar.readers import bounded, queries
from northstar.readers.artifacts import ArtifactFiles
from northstar.readers.liveness import Liveness, pid_alive
from northstar.readers.views import IterationView, RunSummary, StepView

__all__ = [
    "ENDINGS",
    "Ending",
    "RunEnding",
    "StopReason",
    "ending_for",
    "ending_for_error",
    "ending_named",
    "ending_of",
    "read_ending",
    "row_for_code",
]


@dataclass(frozen=True, slots=True)
class Ending:
    """One way a run ends: what means it, the exit status, and what a person does next.

    ``codes``: stop reasons that mean it (an error class's code covers its subclasses).
    ``statuses``: run statuses that mean it whatever the reason. ``next`` is the next
    command, with ``{run_id}``, ``{url}``, ``{rest}`` (iterations not verified) and
    ``{verified}`` filled in. ``one_line``: the reason is not about a page (no expected
    and found). ``note``: how it shows today, for a row no code decides yet.
    ``run_status``: what the journal shows, for a row no status decides. ``within``:
    statuses this row's codes refine (a blind probe is a ``needs_review`` run of its own).
    """

    name: str
    title: str
    exit_code: int
    act: str
    codes: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    next: str = ""
    one_line: bool = False
    note: str = ""
    run_status: str = "`failed`"
    # Statuses in which one of ``codes`` tells this row apart from the status's own row.
    within: tuple[str, ...] = ()


_DETAILS = "details: northstar show {run_id}  (or northstar report {run_id} for a page)"
_RECONCILE = (
    "next: northstar reconcile {run_id}  (finds out whether the submission happened;"
    " then northstar resume {run_id})"
)

ENDINGS: tuple[Ending, ...] = (
    Ending(
        "verified",
        "every requested iteration verified",
        0,
        "nothing",
        statuses=("verified",),
    ),
    Ending(
        "not_verified",
        "an iteration was not verified: a check or an action failed at a step",
        1,
        "read the failing step (expected and found); fix the site and `northstar resume "
        "RUN_ID`, or fix the recipe and start a new run for the iterations not verified",
        next=_DETAILS,
    ),
    Ending(
        "signed_out",
        "the site signed the session out during an iteration: a step met the sign-in page",
        1,
        "`northstar resume RUN_ID`: the recipe's `setup` signs in again before the next "
        "iteration (without `setup`, refresh the state with `northstar sign-in` first)",
        codes=("SIGNED_OUT",),
        next=_DETAILS,
    ),
    Ending(
        "sign_in_failed",
        "could not sign in: `signed_in` did not hold after `setup` ran again; nothing was sent",
        10,
        "check the credentials and the setup steps (`northstar sign-in RECIPE --headed`), "
        "then `northstar resume RUN_ID`",
        codes=("SIGN_IN_FAILED",),
        next="next: check the sign-in (northstar sign-in RECIPE --headed), then "
        "northstar resume {run_id}",
        one_line=True,
    ),
    Ending(
        "usage_error",
        "bad input or usage (recipe, parameters, options, run id, credential): nothing started",
        2,
        "correct the command as the error line's fix says",
        codes=("INPUT_INVALID", "RUN_NOT_FOUND", "CREDENTIALS_INVALID"),
        run_status="no run started (a run asked about is left as it was)",
    ),
    Ending(
        "needs_review",
        "needs review: an output could not be saved, or where to resume is not known",
        3,
        "a person checks the iteration and decides with `northstar reconcile RUN_ID --mark`",
        codes=("OUTPUT_SAVE_FAILED", "RESUME_POINT_UNKNOWN"),
        statuses=("needs_review",),
        next=_DETAILS,
    ),
    Ending(
        "probe_blind",
        "needs review: a reconcile probe never seen to find a known effect did not find this "
        "one, so the submission is not proven absent and nothing was sent again",
        12,
        "fix the probe so it finds a verified submission (`northstar validate --probe`), or "
        "check the site and decide with `northstar reconcile RUN_ID --mark`",
        codes=("PROBE_BLIND",),
        within=("needs_review",),
        next=_DETAILS,
        run_status="`needs_review`",
    ),
    Ending(
        "probe_inconclusive",
        "blocked: the reconcile probe did not land on the page it asked for (a sign-in page, "
        "another path, an error), so it proved nothing",
        13,
        "make the page reachable in the run's state (sign in again, fix the site), then "
        "`northstar reconcile RUN_ID` again",
        codes=("INCONCLUSIVE",),
        within=("blocked",),
        next=_RECONCILE,
        run_status="`blocked`",
    ),
    Ending(
        "unknown_outcome",
        "blocked: a submission was sent and its outcome is unknown",
        4,
        "`northstar reconcile RUN_ID`, then `northstar resume RUN_ID`; never re-run it",
        codes=("OUTCOME_UNKNOWN", "RUN_BLOCKED"),
        statuses=("blocked",),
        next=_RECONCILE,
    ),
    Ending(
        "interrupted",
        "interrupted: the process running it exited without recording an end",
        4,
        "`northstar reconcile RUN_ID` (a submission may have been in flight), then resume",
        statuses=("interrupted",),
        next=_RECONCILE,
    ),
    Ending(
        "binding_changed",
        "stopped by its binding: the recipe's definition, a selected file or the profile changed",
        5,
        "start a new run for the iterations not verified only; the verified ones are done "
        "and must not be sent again",
        codes=("DEFINITION_CHANGED", "FILE_CHANGED", "PROFILE_MISMATCH"),
        next="next: start a new run for the iterations not verified ({rest}); the {verified} "
        "verified must not run again (northstar show {run_id})",
        one_line=True,
    ),
    Ending(
        "origin_blocked",
        "a page tried to leave the tab role's origins and was blocked",
        6,
        "check where the site sent the tab; add the origin to the role's `origins` only if "
        "the recipe may go there",
        codes=("ORIGIN_BLOCKED",),
        next=_DETAILS,
        one_line=True,
    ),
    Ending(
        "site_unreachable",
        "the site could not be reached (connection refused, DNS, TLS): no page came back",
        7,
        "check that the site answers from this machine, then `northstar resume RUN_ID`",
        codes=("SITE_UNREACHABLE",),
        next="next: check that {url} answers, then northstar resume {run_id}",
        one_line=True,
    ),
    Ending(
        "browser_closed",
        "the browser closed (killed, crashed) or could not be started or reached",
        8,
        "find out why the browser went away or would not start (memory, a kill, its path), "
        "then `northstar resume RUN_ID` (or run again if no run started)",
        codes=("BROWSER_CLOSED", "BROWSER_NOT_FOUND", "BROWSER_UNREACHABLE", "DISPLAY_MISSING"),
        next="next: find out why the browser exited, then northstar resume {run_id}",
        one_line=True,
    ),
    Ending(
        "journal_error",
        "the journal cannot be used (missing, not a regular file, damaged, not writable)",
        9,
        "fix the journal path (--journal / NORTHSTAR_JOURNAL) or its permissions",
        codes=("JOURNAL_ERROR",),
        run_status="no run recorded (or the run as far as it was recorded)",
    ),
    Ending(
        "not_sent",
        "a submission was not sent: the browser refused the form (a validation message) "
        "or the page stayed, and no request left it",
        11,
        "correct the row's data and `northstar resume RUN_ID`, or skip the row with "
        "`northstar resume RUN_ID --skip N --why TEXT`; nothing needs reconciling",
        codes=("NOT_SENT",),
        next="next: correct the input and northstar resume {run_id}, or skip the row: "
        "northstar resume {run_id} --skip N --why TEXT",
        one_line=True,
    ),
    Ending(
        "skipped",
        "finished without the rows a person skipped (`resume --skip`, reason journaled)",
        14,
        "nothing for the run; a skipped row was never sent: start a new run for it once its "
        "data is fixed",
        codes=("SKIPPED",),
        next=_DETAILS,
        one_line=True,
    ),
    Ending(
        "stopped",
        "stopped by Ctrl-C or SIGTERM: the step in progress finished, nothing new started",
        130,
        "`northstar resume RUN_ID` when you want the rest",
        statuses=("stopped",),
        next="next: northstar resume {run_id}  (does the iterations not verified yet)",
    ),
)

_DEFAULT = "not_verified"


def ending_named(name: str, table: Sequence[Ending] = ENDINGS) -> Ending:
    return next(row for row in table if row.name == name)


def _by_code(code: str, table: Sequence[Ending]) -> Ending | None:
    """The row for ``code``, or for the code of the nearest error class above it."""
    known = error_class_for_code(code)
    lineage = [code] + [c.code for c in known.__mro__ if issubclass(c, NorthstarError)]
    for each in lineage:
        for row in table:
            if each in row.codes:
                return row
    return None


def row_for_code(code: str, table: Sequence[Ending] = ENDINGS) -> Ending:
    """The row a stop code leads to when no run status decides (``not_verified`` if none)."""
    return _by_code(code, table) or ending_named(_DEFAULT, table)


def ending_for_error(error: NorthstarError, table: Sequence[Ending] = ENDINGS) -> Ending:
    """The row of an error that ended a command with no run to read (or before one)."""
    return row_for_code(error.code, table)


def ending_for(status: str, code: str | None, table: Sequence[Ending] = ENDINGS) -> Ending:
    """The row for a run's status and the code of its stop reason.

    A status that means one ending (blocked, stopped...) decides; a failed run is told
    apart by the code of what stopped it.
    """
    refined = _by_code(code, table) if code else None
    if refined is not None and status in refined.within:
        return refined
    for row in table:
        if status in row.statuses:
            return row
    return row_for_code(code, table) if code else ending_named(_DEFAULT, table)


@dataclass(frozen=True, slots=True)
class StopReason:
    """Why an iteration was not verified, or why the whole run stopped (``iteration`` set or
    not), with the step, the file or URL concerned, and the first failed check."""

    code: str
    message: str
    state: str | None = None  # the iteration's; None when the run's binding stopped it
    iteration: int | None = None
    step: str | None = None
    step_number: int | None = None
    tab: str | None = None
    path: str | None = None
    url: str | None = None
    expected: str | None = None
    found: str | None = None
    files: tuple[str, ...] = ()
    about_page: bool = True  # False: no page came back (one line, no expected and found)
    said_by_check: bool = False  # the message is the failed check's own text: not repeated

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class RunEnding:
    """A run's ending: its row, counts from the journal, the reasons, and the next command.

    ``reasons[0]`` is the stop reason (the run's ``run_stopped``, else its first iteration
    not verified); the others are later iterations not verified, up to a bound, and
    ``more_reasons`` counts the rest. ``ending`` is ``None`` while the run still runs.
    """

    run_id: str
    status: str
    ending: Ending | None
    total: int
    recorded: int
    verified: int
    states: Mapping[str, int] = field(default_factory=dict)
    not_started: int = 0
    first_not_started: tuple[int, ...] = ()
    reasons: tuple[StopReason, ...] = ()
    more_reasons: int = 0
    evidence_count: int = 0  # over the verified iterations
    model_calls: int | None = 0  # over the verified ones; None if any did not report it

    @property
    def final(self) -> bool:
        return self.ending is not None

    @property
    def exit_code(self) -> int | None:
        return None if self.ending is None else self.ending.exit_code

    @property
    def reason(self) -> StopReason | None:
        return self.reasons[0] if self.reasons else None

    @property
    def code(self) -> str | None:
        return self.reason.code if self.reason else None

    def next_command(self) -> str | None:
        if self.ending is None or not self.ending.next:
            return None
        url = self.reason.url if self.reason and self.reason.url else "the site"
        return self.ending.next.format(
            run_id=self.run_id, url=url, rest=self.rest_text(), verified=self.verified
        )

    def rest_text(self) -> str:
        """The iterations not verified, briefly: ``2, 3, 4`` or ``17 of 20: 4, 5, ...``."""
        rest = self.total - self.verified
        numbers = self._rest_numbers()
        shown = ", ".join(str(n) for n in numbers[:10]) + (", ..." if rest > 10 else "")
        return shown if rest <= 10 else f"{rest} of {self.total}: {shown}"

    def _rest_numbers(self) -> list[int]:
        failed = [r.iteration for r in self.reasons if r.iteration is not None]
        return sorted({*failed, *self.first_not_started})

    def to_dict(self) -> dict[str, Any]:
        """The ending as JSON: the same keys in ``run --json``, the API and MCP answers."""
        return {
            "run_id": self.run_id,
            "status": self.status,
            "ending": None if self.ending is None else self.ending.name,
            "exit_code": self.exit_code,
            "requested": self.total,
            "recorded": self.recorded,
            "verified": self.verified,
            "states": dict(self.states),
            "evidence_count": self.evidence_count,
            "model_calls": self.model_calls,
            "not_started": self.not_started,
            "code": self.code,
            "reason": None if self.reason is None else self.reason.to_dict(),
            "others": [reason.to_dict() for reason in self.reasons[1:]],
            "more_reasons": self.more_reasons,
            "next": self.next_command(),
        }


# Reading the journal.

_SHOWN_REASONS = 10  # iterations not verified named in an ending; the others are counted
_FINAL_EVENTS = ("run_stopped", "run_resumed")


def read_ending(
    path: str | os.PathLike[str],
    run_id: str,
    *,
    is_alive: Liveness = pid_alive,
    table: Sequence[Ending] = ENDINGS,
) -> RunEnding:
    """The run's ending from the journal, in a bounded number of rows whatever its length."""
    with queries._open_readonly(path) as conn:
        summary = queries._summary(bounded._run_row(conn, path, run_id), is_alive)
        tally = _tally(conn, run_id)
        rows = conn.execute(
            f"SELECT {bounded._ITERATION_COLUMNS} FROM iterations WHERE run_id = ? "
            "AND state <> 'verified' ORDER BY number LIMIT ?",
            (run_id, _SHOWN_REASONS),
        ).fetchall()
        problems = bounded._fold(conn, run_id, rows, summary.effective_status)
        stopped = _run_stopped(conn, run_id)
        unstarted = _first_not_started(conn, run_id, summary.total_iterations, tally)
    files = ArtifactFiles(run_artifacts_dir(path, run_id))
    reasons = _deciding_first(
        [_iteration_reason(view, files) for view in problems], summary.effective_status
    )
    if stopped is not None:
        reasons.insert(0, _run_reason(stopped))
    return replace(
        ending_of(summary, tally.states, tuple(reasons), unstarted, table),
        evidence_count=tally.evidence,
        model_calls=tally.model_calls,
    )


def ending_of(
    summary: RunSummary,
    states: Mapping[str, int],
    reasons: tuple[StopReason, ...],
    unstarted: tuple[int, ...] = (),
    table: Sequence[Ending] = ENDINGS,
) -> RunEnding:
    """The ending of a run with this summary, these reasons (the deciding one first) and
    these first iterations never started: pure, so the rules are tested without a journal."""
    status = summary.effective_status
    code = reasons[0].code if reasons else None
    reasons = tuple(_placed(reason, table) for reason in reasons)
    row = None if status == "running" else ending_for(status, code, table)
    not_verified = summary.iterations_recorded - summary.iterations_verified
    return RunEnding(
        run_id=summary.run_id,
        status=status,
        ending=row,
        total=summary.total_iterations,
        recorded=summary.iterations_recorded,
        verified=summary.iterations_verified,
        states=states,
        not_started=summary.total_iterations - summary.iterations_recorded,
        first_not_started=unstarted,
        reasons=reasons,
        more_reasons=max(0, not_verified - sum(r.iteration is not None for r in reasons)),
    )


# The iteration state behind each run status: that iteration's reason is the run's.
_STATE_OF_STATUS = {"blocked": "unknown", "failed": "failed", "stopped": "stopped"}


def _deciding_first(reasons: list[StopReason], status: str) -> list[StopReason]:
    """The iterations whose state made the run's status first, each group by number."""
    wanted = _STATE_OF_STATUS.get(status, status)
    return sorted(reasons, key=lambda reason: reason.state != wanted)


def _placed(reason: StopReason, table: Sequence[Ending]) -> StopReason:
    """A reason whose code is not about a page keeps no expected and found."""
    if row_for_code(reason.code, table).one_line:
        return replace(reason, about_page=False, expected=None, found=None)
    return reason


@dataclass(frozen=True, slots=True)
class _Tally:
    """One pass over a run's iterations: counts by state, the verified ones' evidence and
    model calls (``None`` if any did not report them), how many rows and the highest number."""

    states: dict[str, int]
    evidence: int
    model_calls: int | None
    rows: int
    highest: int


def _tally(conn: Any, run_id: str) -> _Tally:
    rows = conn.execute(
        "SELECT state, count(*), max(number), coalesce(sum(evidence_count), 0), "
        "count(*) - count(model_calls), coalesce(sum(model_calls), 0) "
        "FROM iterations WHERE run_id = ? GROUP BY state ORDER BY state",
        (run_id,),
    ).fetchall()
    states = {str(row[0]): int(row[1]) for row in rows}
    verified = next((row for row in rows if row[0] == "verified"), (None, 0, 0, 0, 0, 0))
    return _Tally(
        states,
        evidence=int(verified[3]),
        model_calls=None if int(verified[4]) else int(verified[5]),
        rows=sum(states.values()),
        highest=max((int(row[2]) for row in rows), default=0),
    )


def _run_stopped(conn: Any, run_id: str) -> dict[str, Any] | None:
    """The payload of the run's ``run_stopped`` event, unless a resume came after it."""
    marks = ", ".join("?" for _ in _FINAL_EVENTS)
    row = conn.execute(
        f"SELECT name, payload_json FROM events WHERE run_id = ? AND name IN ({marks}) "
        "ORDER BY id DESC LIMIT 1",
        (run_id, *_FINAL_EVENTS),
    ).fetchone()
    if row is None or row[0] != "run_stopped":
        return None
    payload = json.loads(row[1])
    return payload if isinstance(payload, dict) else None


def _first_not_started(conn: Any, run_id: str, total: int, tally: _Tally) -> tuple[int, ...]:
    """Up to ten numbers in ``1..total`` with no iteration row; the gaps are rare."""
    highest = tally.highest
    if tally.rows == highest:  # no gaps below the highest: the rest follow it
        return tuple(range(highest + 1, min(total, highest + _SHOWN_REASONS) + 1))
    found: list[int] = []
    expected = 1
    for (number,) in conn.execute(
        "SELECT number FROM iterations WHERE run_id = ? ORDER BY number", (run_id,)
    ):
        found.extend(range(expected, min(number, expected + _SHOWN_REASONS)))
        if len(found) >= _SHOWN_REASONS:
            return tuple(found[:_SHOWN_REASONS])
        expected = number + 1
    found.extend(range(expected, total + 1)[: _SHOWN_REASONS - len(found)])
    return tuple(found)


def _run_reason(payload: Mapping[str, Any]) -> StopReason:
    return StopReason(
        code=str(payload.get("code", "")),
        message=str(payload.get("message", "")),
        iteration=_int_or_none(payload.get("iteration")),
        step=_str_or_none(payload.get("step")),
        path=_str_or_none(payload.get("path") or payload.get("file")),
        url=_str_or_none(payload.get("url")),
    )


def _iteration_reason(view: IterationView, files: ArtifactFiles) -> StopReason:
    number, step = _failing_step(view)
    error = step.error if step is not None else None
    code = view.reason_code or view.effective_state.upper()
    expected, found = _expectation(step) if step is not None else (None, None)
    listed = files.of(view.number)
    paths = [*listed.screenshots, *([listed.trace] if listed.trace else [])]
    return StopReason(
        code=code,
        message=view.reason or "",
        state=view.effective_state,
        iteration=view.number,
        step=view.failing_step,
        step_number=number,
        tab=step.tab if step is not None else None,
        path=_str_or_none((error or {}).get("path")),
        url=_str_or_none((error or {}).get("url")),
        expected=expected,
        found=found,
        files=tuple(str(path) for path in paths),
        said_by_check=error is not None and error.get("message") == view.reason,
    )


def _failing_step(view: IterationView) -> tuple[int | None, StepView | None]:
    for number, step in enumerate(view.steps, start=1):
        if step.step_id == view.failing_step:
            return number, step
    return None, None


def _expectation(step: StepView) -> tuple[str | None, str | None]:
    """The first failed check of ``step``: from its evidence, else from its error's text."""
    for evidence in step.evidence:
        if not evidence.get("passed", True):
            return str(evidence.get("expected", "")), str(evidence.get("found") or "") or None
    if step.error is None:
        return None, None
    message = str(step.error.get("message", ""))
    expected, marker, rest = message.partition(" / Actual value: ")
    if not marker:
        return message, None
    expected = expected.split(": Locator expected ")[0]
    return expected, rest.split(" / ")[0]


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_or_none(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None
