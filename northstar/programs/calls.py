"""One iteration's calls from its program, carried out by the agent path's host operations.

``IterationCalls`` answers each request line of the program: the execution id and the
credential are checked first (``CREDENTIALS_INVALID`` otherwise), then the call is done
by the agent path's ``SessionCore`` on the iteration's browser context, the same code that
acts for an agent: tab roles and origins enforced by the adapter, every action through the
host's one dispatch routine, a submission in flight durably before it is sent, and the same
submission (key and input fingerprint) answered from the record instead of being sent
again (the journal's one rule, ``northstar.journal.submissions``). What the program
declares about itself (outputs, model calls, ``complete()``) is kept here for the verdict.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from northstar.agent.actions import (
    ActRequest,
    act_request,
    input_fingerprint,
    submission_step_id,
)
from northstar.browser import Reading
from northstar.errors import (
    CredentialsInvalid,
    ExpectationFailed,
    NorthstarError,
    UsageInvalid,
)
from northstar.journal import Journal, SubmissionVerdict
from northstar.programs.session import ProgramSession
from northstar.recipe.model import Check, ReconcileProbe, Target
from northstar.redaction import redact_data
from northstar.run.dispatch import NOT_RESENT

__all__ = ["PROBE_EVENT", "IterationCalls", "ProgramReport", "fingerprint_secret"]

PROBE_EVENT = "program_reconcile_probe"
_FIX = "See the SDK's docstrings (northstar.sdk) for the calls and their arguments."


def fingerprint_secret(credential: str) -> bytes:
    """The key of a run's input fingerprints: stable for the run, unknown to the journal."""
    return hmac.new(credential.encode(), b"northstar-program-inputs", hashlib.sha256).digest()


@dataclass
class ProgramReport:
    """What the program said about its iteration; the host still verifies every word."""

    completed: bool = False
    result: Mapping[str, Any] | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    model_calls: int | None = None  # None until reported: unknown, never 0
    tokens: int | None = None
    failed_verifications: list[str] = field(default_factory=list)  # tab.verify that failed


def _usage(message: str) -> UsageInvalid:
    return UsageInvalid(message, fix=_FIX)


def _check(raw: Any) -> Check:
    try:
        return Check.model_validate(raw)
    except ValidationError as exc:
        raise _usage(f"check: {exc.errors()[0]['msg']}") from None


def _probe(raw: Any) -> ReconcileProbe:
    try:
        return ReconcileProbe.model_validate(raw)
    except ValidationError as exc:
        raise _usage(f"reconcile: {exc.errors()[0]['msg']}") from None


def _sanitize_key(key: Any) -> str:
    text = "".join(c if c.isalnum() or c in "._-" else "-" for c in str(key))
    return text.lstrip(".-")[:64] or "key"


class IterationCalls:
    """The request handler of one iteration (see the module docstring)."""

    def __init__(
        self,
        session: ProgramSession,
        journal: Journal,
        credential_check: Callable[[str, str], None],
        declared_outputs: tuple[str, ...],
        timeout_ms: int,
    ) -> None:
        self.session, self.journal = session, journal
        self.core = session.core
        self._credential_check = credential_check
        self._declared = declared_outputs
        self._timeout = timeout_ms
        self.report = ProgramReport()
        self._ops: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]] = {
            "params": self._params,
            "act": self._act,
            "check": self._check_op,
            "read": self._read,
            "observe": self._observe,
            "output": self._output,
            "model_calls": self._model_calls,
            "complete": self._complete,
        }

    async def answer(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The answer line for one request line: its result or its coded error."""
        number = request.get("id")
        try:
            self._credential_check(
                str(request.get("execution_id", "")), str(request.get("credential", ""))
            )
            op = self._ops.get(str(request.get("op")))
            if op is None:
                raise _usage(f"unknown call {request.get('op')!r}")
            args = request.get("args") or {}
            if not isinstance(args, dict):
                raise _usage("args must be an object")
            return {"id": number, "ok": True, "result": await op(args)}
        except NorthstarError as exc:
            return {"id": number, "ok": False, "error": _error(exc)}
        except (TypeError, ValueError, KeyError) as exc:
            return {"id": number, "ok": False, "error": _error(_usage(str(exc)))}

    async def _params(self, args: dict[str, Any]) -> dict[str, Any]:
        return dict(self.core.plan.param_values)

    async def _act(self, args: dict[str, Any]) -> dict[str, Any]:
        expect = [_check(raw) for raw in args.get("expect") or []]
        probes = [_probe(raw) for raw in args.get("reconcile") or []]
        submit = bool(args.get("submit"))
        key = _sanitize_key(args["key"]) if submit and args.get("key") else None
        request = act_request(
            str(args.get("tab")),
            str(args.get("action")),
            target=args.get("target"),
            value=args.get("value"),
            submit=submit,
            key=key,
        )
        if submit:
            earlier = self._settled_earlier(request)
            if earlier is not None:
                return earlier
            self._record_probes(request, probes, args.get("settle"))
        # A submission's expect= is part of its step: one failing leaves it unknown.
        answer = await self.core.act(request, self._timeout, expect=expect if submit else ())
        if answer.dispatched and not submit:
            for check in expect:
                held = await self.core.check(request.tab, check, self._timeout)
                if not held.held:
                    raise ExpectationFailed(
                        f"after {answer.did}: {held.check} did not hold ({held.found})",
                        tab=request.tab,
                    )
        return {
            "did": answer.did,
            "dispatched": answer.dispatched,
            "submission_key": answer.submission_key,
            "url": answer.page.url,
        }

    def _settled_earlier(self, request: ActRequest) -> dict[str, Any] | None:
        """A submission verified by an earlier process of this iteration (before a resume).

        Its answer is gone with that process, so the program is told it was not sent again;
        within one process the agent session answers with the first answer itself.
        """
        core = self.core
        step_id = submission_step_id(core.secret, request)
        if step_id in core.answers:
            return None
        fingerprint = input_fingerprint(core.secret, request, None)
        if core.submission_verdict(step_id, fingerprint) is not SubmissionVerdict.RECORDED:
            return None
        return {"did": NOT_RESENT, "dispatched": False, "submission_key": step_id, "url": ""}

    def _record_probes(
        self, request: ActRequest, probes: list[ReconcileProbe], settle: Any
    ) -> None:
        """The submission's read-only reconcile probes, journaled before it can be in flight."""
        core = self.core
        step_id = submission_step_id(core.secret, request)
        dumped = [p.model_dump(mode="json", exclude_none=True) for p in probes]
        self.journal.event(
            core.session_id,
            PROBE_EVENT,
            iteration=core.plan.iteration,
            step=step_id,
            tab=request.tab,
            settle=settle if type(settle) is int and settle >= 0 else None,
            probes=redact_data(dumped, core.plan.secrets),
        )

    async def _check_op(self, args: dict[str, Any]) -> dict[str, Any]:
        tab = str(args.get("tab"))
        answer = await self.core.check(tab, _check(args.get("check")), self._timeout)
        if args.get("required") and not answer.held:
            self.report.failed_verifications.append(f"{answer.check} ({answer.found})")
        return {"held": answer.held, "found": answer.found}

    async def _read(self, args: dict[str, Any]) -> str:
        tab = str(args.get("tab"))
        self.core.view(tab)  # TAB_CLOSED for a role the declaration does not have
        target = None if args.get("target") is None else Target.model_validate(args["target"])
        reading = Reading(args.get("source", "text"), tab, target, args.get("attribute"))
        return await self.core.browser.read(reading, timeout_ms=self._timeout)

    async def _observe(self, args: dict[str, Any]) -> dict[str, Any]:
        tab = str(args.get("tab"))
        self.core.view(tab)
        observation = await self.core.browser.observe(tab)
        return observation.model_dump(mode="json", include={"url", "title", "text", "tables"})

    async def _output(self, args: dict[str, Any]) -> None:
        name = str(args.get("name"))
        if name not in self._declared:
            raise _usage(f"output {name!r} is not declared; declared: {list(self._declared)}")
        self.report.outputs[name] = str(args.get("value"))

    async def _model_calls(self, args: dict[str, Any]) -> None:
        count, tokens = args.get("count"), args.get("tokens")
        if type(count) is not int or count < 0 or not (tokens is None or type(tokens) is int):
            raise _usage("report_model_calls takes a count >= 0 and optional whole tokens")
        self.report.model_calls = (self.report.model_calls or 0) + count
        if tokens is not None:
            self.report.tokens = (self.report.tokens or 0) + tokens

    async def _complete(self, args: dict[str, Any]) -> None:
        result = args.get("result")
        self.report.completed = True
        self.report.result = result if isinstance(result, dict) else None


def _error(exc: NorthstarError) -> dict[str, Any]:
    return {"code": exc.code, "message": exc.message, "fix": exc.fix}


def credential_checker(journal: Journal, run_id: str) -> Callable[[str, str], None]:
    """Accept only this run's id with this run's credential (checked by its hash)."""

    def check(execution_id: str, credential: str) -> None:
        if execution_id != run_id:
            raise CredentialsInvalid(
                "the call names another run than the one this program was started for",
                run_id=run_id,
            )
        journal.check_credential(run_id, credential)

    return check
