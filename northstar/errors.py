"""Every expected failure in Northstar, as one tree with stable codes.

A ``NorthstarError`` carries a machine-readable ``code`` that never changes between
releases, a message that says what went wrong, a one-line ``fix`` that says what to do
about it, and the context a person needs (run, iteration, step, tab role, file position).
The CLI prints ``code``, message and fix on one line each and never a traceback.

    NorthstarError
    ├── InputError                        bad input; nothing was started (CLI exit 2)
    │   ├── RecipeInvalid                 RECIPE_INVALID
    │   ├── ParamMissing                  PARAM_MISSING
    │   ├── ParamInvalid                  PARAM_INVALID
    │   ├── RepeatOptionsInvalid          REPEAT_OPTIONS_INVALID
    │   ├── ConfigInvalid                 CONFIG_INVALID
    │   └── UsageInvalid                  USAGE_INVALID
    │       └── EventLoopRunning          EVENT_LOOP_RUNNING
    ├── BindingError                      the run's binding no longer holds
    │   ├── DefinitionChanged             DEFINITION_CHANGED
    │   ├── FileChanged                   FILE_CHANGED
    │   ├── ProfileMismatch               PROFILE_MISMATCH
    │   ├── CredentialsInvalid            CREDENTIALS_INVALID
    │   └── FixOutdated                   FIX_OUTDATED
    ├── BrowserError                      the browser could not do what a step asked
    │   ├── BrowserNotFound               BROWSER_NOT_FOUND
    │   ├── BrowserUnreachable            BROWSER_UNREACHABLE
    │   ├── DisplayMissing                DISPLAY_MISSING
    │   ├── BrowserClosed                 BROWSER_CLOSED
    │   ├── OriginBlocked                 ORIGIN_BLOCKED
    │   │   └── SchemeBlocked             SCHEME_BLOCKED
    │   ├── TabClosed                     TAB_CLOSED
    │   ├── TargetMissing                 TARGET_MISSING
    │   ├── TargetAmbiguous               TARGET_AMBIGUOUS
    │   ├── StaleReference                STALE_REFERENCE
    │   ├── NavigationFailed              NAVIGATION_FAILED
    │   │   └── SiteUnreachable           SITE_UNREACHABLE
    │   └── ActionFailed                  ACTION_FAILED
    │       ├── OptionMissing             OPTION_MISSING
    │       └── FillNotApplied            FILL_NOT_APPLIED
    ├── VerificationError                 an outcome could not be shown
    │   ├── ExpectationFailed             EXPECTATION_FAILED
    │   ├── NotSent                       NOT_SENT
    │   ├── ProgramIterationNotVerified   PROGRAM_ITERATION_NOT_VERIFIED
    │   └── OutputSaveFailed              OUTPUT_SAVE_FAILED
    ├── SignInError                       the run's signed-in state could not be had or kept
    │   ├── SignInFailed                  SIGN_IN_FAILED
    │   └── SignedOut                     SIGNED_OUT
    ├── OutcomeError                      at-most-once bookkeeping of submissions
    │   ├── OutcomeUnknown                OUTCOME_UNKNOWN
    │   ├── RunBlocked                    RUN_BLOCKED
    │   │   ├── OutcomeSettling           OUTCOME_SETTLING
    │   │   └── ProbeInconclusive         INCONCLUSIVE
    │   ├── ProbeBlind                    PROBE_BLIND
    │   └── IdempotencyConflict           IDEMPOTENCY_CONFLICT
    └── JournalError                      JOURNAL_ERROR, RUN_NOT_FOUND
        └── JournalUnavailable            JOURNAL_UNAVAILABLE

Secret values never enter an error: callers pass names and descriptions, not values.
``error_line`` is the one line every front end prints for an error, with control
characters shown as escapes (``printable``), so a message cannot rewrite a terminal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

__all__ = [
    "ActionFailed",
    "BindingError",
    "BrowserClosed",
    "BrowserError",
    "BrowserNotFound",
    "BrowserUnreachable",
    "ConfigInvalid",
    "CredentialsInvalid",
    "DefinitionChanged",
    "DisplayMissing",
    "EventLoopRunning",
    "ExpectationFailed",
    "FileChanged",
    "FillNotApplied",
    "FixOutdated",
    "IdempotencyConflict",
    "InputError",
    "JournalError",
    "JournalUnavailable",
    "NavigationFailed",
    "NorthstarError",
    "NotSent",
    "OptionMissing",
    "OriginBlocked",
    "OutcomeError",
    "OutcomeSettling",
    "OutcomeUnknown",
    "OutputSaveFailed",
    "ParamInvalid",
    "ParamMissing",
    "ProbeBlind",
    "ProbeInconclusive",
    "ProfileMismatch",
    "ProgramIterationNotVerified",
    "RecipeInvalid",
    "RepeatOptionsInvalid",
    "RunBlocked",
    "RunNotFound",
    "SchemeBlocked",
    "SignInError",
    "SignInFailed",
    "SignedOut",
    "SiteUnreachable",
    "StaleReference",
    "TabClosed",
    "TargetAmbiguous",
    "TargetMissing",
    "UsageInvalid",
    "VerificationError",
    "error_class_for_code",
    "error_line",
    "fix_text",
    "printable",
]

_CONTEXT_KEYS = (
    "run_id",
    "iteration",
    "step",
    "tab",
    "file",
    "line",
    "column",
    "path",
    "status",
    "url",
    "net_error",
)


class NorthstarError(Exception):
    """Base of every expected Northstar failure; ``code`` is stable, ``fix`` is one line."""

    code: ClassVar[str] = "NORTHSTAR_ERROR"
    default_fix: ClassVar[str] = "See the error codes in the documentation (reference/errors)."

    def __init__(self, message: str, *, fix: str | None = None, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix or self.default_fix
        self.context: dict[str, Any] = {k: v for k, v in context.items() if v is not None}

    def __str__(self) -> str:
        return f"{self.code}: {self.where()}{self.message}"

    def where(self) -> str:
        """A short prefix naming the place of the failure: file position or step."""
        ctx = self.context
        if "file" in ctx:
            pos = str(ctx["file"])
            if "line" in ctx:
                pos += f":{ctx['line']}:{ctx.get('column', 1)}"
            return f"{pos}: "
        if "step" in ctx:
            return f"step {ctx['step']!r}: "
        return ""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON output and the journal."""
        out: dict[str, Any] = {"code": self.code, "message": self.message, "fix": self.fix}
        out.update({k: self.context[k] for k in _CONTEXT_KEYS if k in self.context})
        return out

    def with_context(self, **context: Any) -> NorthstarError:
        """Add context that the raiser did not know (run, iteration); keeps what is set."""
        for key, value in context.items():
            if value is not None:
                self.context.setdefault(key, value)
        return self


class InputError(NorthstarError):
    """Bad input: a recipe, a parameter or an option. Nothing was started."""

    code = "INPUT_INVALID"


class RecipeInvalid(InputError):
    code = "RECIPE_INVALID"
    default_fix = "Correct the recipe at the named place; `northstar schema` shows the format."


class ParamMissing(InputError):
    code = "PARAM_MISSING"
    default_fix = "Pass it with -p NAME=VALUE or in the params file, or give it a default."


class ParamInvalid(InputError):
    code = "PARAM_INVALID"
    default_fix = "Pass a value of the parameter's declared type."


class RepeatOptionsInvalid(InputError):
    code = "REPEAT_OPTIONS_INVALID"
    default_fix = "Pass whole numbers within the bounds named in the message."


class ConfigInvalid(InputError):
    """The project file or a setting's environment variable holds something unusable."""

    code = "CONFIG_INVALID"
    default_fix = "Correct the setting named in the message (see docs: configuration)."


class UsageInvalid(InputError):
    code = "USAGE_INVALID"
    default_fix = "Run the command with --help to see its options."


class EventLoopRunning(UsageInvalid):
    """``northstar.run_sync`` was called where an event loop is already running."""

    code = "EVENT_LOOP_RUNNING"
    default_fix = "In async code, `await northstar.run(...)` instead of calling run_sync."


class BindingError(NorthstarError):
    """The run's binding (project, profile, definition, credentials) no longer holds."""

    code = "BINDING_ERROR"


class DefinitionChanged(BindingError):
    code = "DEFINITION_CHANGED"
    default_fix = "Start a new run for the changed recipe; a run stays bound to its definition."


class FileChanged(BindingError):
    code = "FILE_CHANGED"
    default_fix = "Restore the file or start a new run that selects the changed file."


class ProfileMismatch(BindingError):
    code = "PROFILE_MISMATCH"
    default_fix = "Use the profile the run was started with, or start a new run."


class CredentialsInvalid(BindingError):
    code = "CREDENTIALS_INVALID"
    default_fix = "Present the credential printed when the run started (NORTHSTAR_RUN_CREDENTIAL)."


class FixOutdated(BindingError):
    """A proposed fix was made against other content than the recipe file has now."""

    code = "FIX_OUTDATED"
    default_fix = "Ask for a new proposal against the file as it is (propose_fix), then review it."


class BrowserError(NorthstarError):
    """The browser could not do what a step asked."""

    code = "BROWSER_ERROR"


class BrowserNotFound(BrowserError):
    code = "BROWSER_NOT_FOUND"
    default_fix = (
        "Install Chromium (`apt-get install chromium chromium-headless-shell` or "
        "`playwright install chromium`) or pass --browser PATH / set NORTHSTAR_BROWSER."
    )


class BrowserUnreachable(BrowserError):
    """A remote browser (``--cdp-url``, ``--ws-endpoint``) did not accept the connection."""

    code = "BROWSER_UNREACHABLE"
    default_fix = (
        "Check that the browser (or the Playwright browser server) is running and that the "
        "URL, its port and path are right; `curl URL/json/version` answers for a CDP endpoint."
    )


class DisplayMissing(BrowserError):
    """A headed browser (``--headed``, ``--step``, ``--pause-on-failure``) needs a display."""

    code = "DISPLAY_MISSING"
    default_fix = (
        "Run it under a virtual display (`xvfb-run northstar run ...`), set DISPLAY to a "
        "running X server, or run headless (drop --headed, --step, --pause-on-failure)."
    )


class BrowserClosed(BrowserError):
    """The browser went away (killed, crashed) while the run was using it."""

    code = "BROWSER_CLOSED"
    default_fix = (
        "Check why the browser exited (memory, a kill), then `northstar resume RUN_ID` "
        "(reconcile first if an outcome is unknown)."
    )


class OriginBlocked(BrowserError):
    code = "ORIGIN_BLOCKED"
    default_fix = "Add the origin to the tab role's `origins` if the recipe may visit it."


class SchemeBlocked(OriginBlocked):
    """A tab was sent to a page that is not http(s): ``file:``, ``data:``, ``javascript:``..."""

    code = "SCHEME_BLOCKED"
    default_fix = (
        "A tab loads only http(s) pages of its origins (and about:blank); serve the file "
        "from a local web server and add that origin to the tab role's `origins`."
    )


class TabClosed(BrowserError):
    code = "TAB_CLOSED"
    default_fix = "Check which step closes the tab; a role's tab must stay open while it is used."


class TargetMissing(BrowserError):
    code = "TARGET_MISSING"
    default_fix = (
        "Check the target against the page (role, name, label); the site may have changed."
    )


class TargetAmbiguous(BrowserError):
    code = "TARGET_AMBIGUOUS"
    default_fix = "Narrow the target: a `within` scope, a more specific name, or no `exact: false`."


class StaleReference(BrowserError):
    code = "STALE_REFERENCE"
    default_fix = "Observe the tab again and act on a reference from the new observation."


class NavigationFailed(BrowserError):
    code = "NAVIGATION_FAILED"
    default_fix = "Check that the site is up and the URL is right."


class SiteUnreachable(NavigationFailed):
    """No page came back: the connection was refused, the name did not resolve, TLS failed.

    Not about a page or the recipe: ``url`` is where the browser went and ``net_error``
    Chromium's name for what happened (``ERR_CONNECTION_REFUSED``).
    """

    code = "SITE_UNREACHABLE"
    default_fix = "Check that the site is up and reachable from this machine, then resume the run."


class ActionFailed(BrowserError):
    code = "ACTION_FAILED"
    default_fix = "Check that the target is visible, enabled and of the kind the step expects."


class OptionMissing(ActionFailed):
    """A ``select`` asked for a value or label its options do not have; nothing was chosen."""

    code = "OPTION_MISSING"
    default_fix = "Use one of the options named in the message, or check the parameter value."


class FillNotApplied(ActionFailed):
    """Text typed into a rich editor (a ``contenteditable``) is not in the editor after it
    settled: the editor's model did not take it, so a submission would lose it."""

    code = "FILL_NOT_APPLIED"
    default_fix = (
        "Check that the editor accepts typing; try the fill option `type: true` (with a `delay`)."
    )


class VerificationError(NorthstarError):
    """An outcome could not be shown to hold."""

    code = "VERIFICATION_ERROR"


class ExpectationFailed(VerificationError):
    code = "EXPECTATION_FAILED"
    default_fix = "Compare the expectation with the page; the step's effect did not show."


class NotSent(VerificationError):
    """A submit step acted on its target, but no request other than a GET left the page and
    the page stayed (or shows a validation message): nothing was sent, so the iteration
    failed safely and may be skipped or sent again."""

    code = "NOT_SENT"
    default_fix = (
        "Correct the row's data (see the validation message), or skip it with "
        "`northstar resume RUN_ID --skip N --why TEXT`."
    )


class ProgramIterationNotVerified(VerificationError):
    """An iteration could not be verified; the loop stopped before the next one.

    ``result`` is the unverified iteration's result and ``verified`` the results that
    were verified before it (plain objects of the caller's choosing).
    """

    code = "PROGRAM_ITERATION_NOT_VERIFIED"
    default_fix = "Read the iteration's reason with `northstar show RUN_ID`, fix it, run again."

    def __init__(
        self, message: str, *, result: Any = None, verified: Any = (), **context: Any
    ) -> None:
        super().__init__(message, **context)
        self.result = result
        self.verified = verified


class OutputSaveFailed(VerificationError):
    code = "OUTPUT_SAVE_FAILED"
    default_fix = "Check that the output folder is writable and has space; the run needs review."


class SignInError(NorthstarError):
    """The run's signed-in state (its ``setup`` and ``signed_in`` checks) did not hold."""

    code = "SIGN_IN_ERROR"


class SignInFailed(SignInError):
    """``signed_in`` did not hold after ``setup`` ran again: no iteration was started."""

    code = "SIGN_IN_FAILED"
    default_fix = (
        "Check the credentials and the setup steps (`northstar sign-in RECIPE --headed` shows "
        "them), then `northstar resume RUN_ID`."
    )


class SignedOut(SignInError):
    """A step met the sign-in page instead of its target: the session ended mid-iteration."""

    code = "SIGNED_OUT"
    default_fix = "The site ended the session; `northstar resume RUN_ID` signs in again first."


class OutcomeError(NorthstarError):
    """At-most-once bookkeeping for submissions."""

    code = "OUTCOME_ERROR"


class OutcomeUnknown(OutcomeError):
    code = "OUTCOME_UNKNOWN"
    default_fix = "Run `northstar reconcile RUN_ID` to find out whether the submission happened."


class RunBlocked(OutcomeError):
    code = "RUN_BLOCKED"
    default_fix = "Reconcile the unknown outcome (`northstar reconcile RUN_ID`), then resume."


class OutcomeSettling(RunBlocked):
    """Blocked until a submission's settle period has passed: its absence is not proven yet."""

    code = "OUTCOME_SETTLING"
    default_fix = "Run `northstar reconcile RUN_ID` again after the time named, then resume."


class ProbeInconclusive(RunBlocked):
    """A reconcile probe did not land on the page it asked for: it proves nothing yet."""

    code = "INCONCLUSIVE"
    default_fix = (
        "Make the probe's page reachable in the run's state (sign in again, fix the site), "
        "then `northstar reconcile RUN_ID` again."
    )


class ProbeBlind(OutcomeError):
    """A probe never seen to find a known effect did not find this one: not proof of absence."""

    code = "PROBE_BLIND"
    default_fix = (
        "Fix the recipe's `reconcile` probe so it finds a verified submission "
        "(`northstar validate --probe`), or check the site and decide with "
        "`northstar reconcile RUN_ID --mark`."
    )


class IdempotencyConflict(OutcomeError):
    code = "IDEMPOTENCY_CONFLICT"
    default_fix = "The same submission key was used with other inputs; start a new run."


class JournalError(NorthstarError):
    code = "JOURNAL_ERROR"
    default_fix = "Check the journal path (--journal / NORTHSTAR_JOURNAL) and its permissions."


class JournalUnavailable(JournalError):
    """The journal's database does not answer (down, restarting, refusing connections)."""

    code = "JOURNAL_UNAVAILABLE"
    default_fix = (
        "Check that Postgres is running, reachable and below max_connections; queued "
        "iterations wait for the next worker, so start the worker again once it answers."
    )


class RunNotFound(JournalError):
    code = "RUN_NOT_FOUND"
    default_fix = "List runs with `northstar runs` and use one of their ids."


def _all_subclasses(cls: type[NorthstarError]) -> list[type[NorthstarError]]:
    found: list[type[NorthstarError]] = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_all_subclasses(sub))
    return found


# C0 and C1 controls, DEL, and the marks that reorder or break a line on a terminal.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with control characters shown as escapes (``\\x1b``): one line stays one line."""
    return _UNPRINTABLE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def fix_text(error: NorthstarError) -> str:
    """The error's fix with the real run id in place of the ``RUN_ID`` placeholder, if known."""
    run_id = error.context.get("run_id")
    return error.fix.replace("RUN_ID", str(run_id)) if run_id else error.fix


def error_line(error: NorthstarError) -> str:
    """The one line for an error, as the CLI, the MCP server and the test plugin print it."""
    return printable(f"error[{error.code}] {error.where()}{error.message} (fix: {fix_text(error)})")


def error_class_for_code(code: str) -> type[NorthstarError]:
    """The error class that owns ``code`` (for reading errors back from the journal)."""
    table: Mapping[str, type[NorthstarError]] = {c.code: c for c in _all_subclasses(NorthstarError)}
    return table.get(code, NorthstarError)
