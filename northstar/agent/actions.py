"""An agent's action, checked, and turned into the same ``BoundStep`` a recipe runs.

``act(tab, action, ref=… | target=…, value=…, submit=…, key=…)``:

| action | element | value |
| --- | --- | --- |
| ``click``, ``check``, ``uncheck``, ``hover`` | ref or target | none |
| ``fill`` | ref or target | the text |
| ``select`` | ref or target | an option's value or label, or a list of them |
| ``press`` | ref, target or none (the page) | the key, e.g. ``Enter`` |
| ``upload`` | ref or target | a file path or a list of them |
| ``goto`` | none | a URL, absolute or relative to the page |

A ``ref`` comes from the tab's latest observation; a ``target`` is the recipe ``Target``
(``{"role": "button", "name": "Send"}``), resolved on the page the way a recipe's is.

A submission (``submit=True``) is journaled like a recipe's submit step: in flight,
durably, right before it is dispatched. Its key is ``key`` when given; otherwise the call
itself (tab, action, ref or target, value), so the same call made twice is one
submission. References are never reused by another page, so acting by reference on a
page loaded again is a new call. Its input fingerprint is a keyed digest of the tab,
action, what the element is (role and name, not its reference) and the value: the same
key with other inputs is ``IDEMPOTENCY_CONFLICT``. The digest's key lives only as long as
the session, so nothing typed can be guessed back from the journal.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, Unpack, get_args

from pydantic import ValidationError

from northstar.errors import UsageInvalid
from northstar.plan.model import BoundStep
from northstar.recipe.model import Check, RetryPolicy, Step, Target

__all__ = [
    "ACTIONS",
    "ActOptions",
    "ActRequest",
    "AgentAction",
    "act_request",
    "build_step",
    "element_target",
    "input_fingerprint",
    "submission_step_id",
]

AgentAction = Literal[
    "click", "fill", "select", "check", "uncheck", "press", "goto", "upload", "hover"
]
ACTIONS: tuple[AgentAction, ...] = get_args(AgentAction)
_NEEDS_VALUE = frozenset({"fill", "select", "press", "goto", "upload"})
_LIST_VALUE = frozenset({"select", "upload"})
_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_NO_RETRY = RetryPolicy(attempts=1)  # the agent decides what to try again
_FIX = "See the act tool's description: action, ref or target, value."

Value = str | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ActRequest:
    """One checked ``act`` call."""

    tab: str
    action: AgentAction
    ref: str | None
    target: Target | None
    value: Value | None
    submit: bool
    key: str | None

    def call_identity(self) -> list[Any]:
        """The call as made: what "the same call" compares (for a key of its own)."""
        target = None if self.target is None else self.target.model_dump(exclude_defaults=True)
        return [self.tab, self.action, self.ref, target, self.value]


def _usage(message: str) -> UsageInvalid:
    return UsageInvalid(message, fix=_FIX)


def _target(raw: Target | Mapping[str, Any] | None) -> Target | None:
    if raw is None or isinstance(raw, Target):
        return raw
    try:
        return Target.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise _usage(f"target: {first['msg']}") from None


def _value(action: str, raw: str | Sequence[str] | None) -> Value | None:
    if raw is None:
        if action in _NEEDS_VALUE:
            raise _usage(f"{action} needs a value")
        return None
    if action not in _NEEDS_VALUE:
        raise _usage(f"{action} takes no value")
    if isinstance(raw, str):
        return raw
    if action in _LIST_VALUE and raw and all(isinstance(v, str) for v in raw):
        return tuple(raw)
    raise _usage(
        f"{action} needs a text value" + (" or a list of them" if action in _LIST_VALUE else "")
    )


def _check_element(action: str, ref: str | None, target: Target | None) -> None:
    given = (ref is not None) + (target is not None)
    if given == 2:
        raise _usage("give a ref or a target, not both")
    if action == "goto" and given:
        raise _usage("goto takes a URL as its value, not an element")
    if action not in ("goto", "press") and not given:
        raise _usage(f"{action} needs a ref (from the latest observation) or a target")


class ActOptions(TypedDict, total=False):
    """What an ``act`` call may add to its tab and action (all optional)."""

    ref: str | None
    target: Target | Mapping[str, Any] | None
    value: str | Sequence[str] | None
    submit: bool
    key: str | None


def act_request(tab: str, action: str, **options: Unpack[ActOptions]) -> ActRequest:
    """The call checked; ``USAGE_INVALID`` says what is wrong with it."""
    ref, target, value = options.get("ref"), options.get("target"), options.get("value")
    submit, key = options.get("submit", False), options.get("key")
    if action not in ACTIONS:
        raise _usage(f"unknown action {action!r}; one of: {', '.join(ACTIONS)}")
    checked = _target(target)
    _check_element(action, ref, checked)
    if key is not None and (not submit or not _KEY.fullmatch(key)):
        raise _usage("key goes with submit=true: 1 to 64 letters, digits, '.', '-' or '_'")
    return ActRequest(tab, action, ref, checked, _value(action, value), submit, key)


def element_target(role: str, name: str) -> Target:
    """A target that describes an element seen in an observation (for messages only).

    Not validated: an observation may name roles a recipe cannot use (``iframe``).
    """
    return Target.model_construct(role=role, name=name or None, exact=True)


def _body(request: ActRequest, target: Target | None) -> dict[str, Any]:
    action, value = request.action, request.value
    if action == "goto":
        return {"goto": value}
    if action == "press":
        return {"press": {"key": value, "target": target}}
    body: dict[str, Any] = {"target": target}
    if action == "fill":
        body["value"] = value
    elif action == "select":
        body.update({"values": list(value)} if isinstance(value, tuple) else {"value": value})
    elif action == "upload":
        body["files"] = list(value) if isinstance(value, tuple) else [value]
    return {action: body}


def build_step(
    request: ActRequest,
    target: Target | None,
    *,
    step_id: str,
    index: int,
    timeout_ms: int,
    expect: Sequence[Check] = (),
) -> BoundStep:
    """The recipe step for the call; ``target`` is the request's, or the referenced element's.

    ``expect``: the step's own expectations (a program's submission checks them as part
    of its step, as a recipe's submit step does).
    """
    try:
        step = Step.model_validate(
            {
                "id": step_id,
                "tab": request.tab,
                "effect": "submit" if request.submit else None,
                "timeout": timeout_ms,
                "expect": list(expect),
                **_body(request, target),
            }
        )
    except ValidationError as exc:
        raise _usage(f"{request.action}: {exc.errors()[0]['msg']}") from None
    return BoundStep(index=index, step=step, timeout_ms=timeout_ms, retry=_NO_RETRY)


def _digest(secret: bytes, payload: Any) -> str:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)
    return hmac.new(secret, text.encode("utf-8"), hashlib.sha256).hexdigest()


def input_fingerprint(secret: bytes, request: ActRequest, element: str | None) -> str:
    """Keyed digest of what the call does: tab, action, the element's label, the value."""
    target = None if request.target is None else request.target.model_dump(exclude_defaults=True)
    return _digest(secret, [request.tab, request.action, element, target, request.value])


def submission_step_id(secret: bytes, request: ActRequest) -> str:
    """The submission's journal step id: its own key, or one made from the call itself."""
    if request.key is not None:
        return f"submit.{request.key}"
    return "submit.call-" + _digest(secret, request.call_identity())[:20]
