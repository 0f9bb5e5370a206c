"""Which recorded clicks submit something: ``effect: submit``, at most once per iteration.

A click (or Enter pressed on a button) is a submission when its button or link is named
like one (Submit, Send, Save, Create, Post, Publish, Sign up, Sign in, Register, Pay,
Delete, Apply...), or when values were typed since the last submission (and no ``goto``
left the page since) and either the click is followed by a URL expectation of its own tab
(or sat in an ``expect_navigation`` block), or the step presses Enter in a field: that is
a form's implicit submission, and codegen records no navigation after it (a real
recording of a form filled with the keyboard ends in ``press("Enter")`` on a field).

A submission keeps the expectations that followed it; one with none gets a ``TODO``
comment, because a submit step without ``expect`` does not validate (nothing could prove
it happened).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from northstar.authoring.steps import DraftStep

__all__ = ["SUBMIT_TODO", "mark_submissions"]

_SUBMIT_NAME = re.compile(
    r"^\s*(submit|send|save|create|post|publish|sign\s?up|sign\s?in|log\s?in|register|"
    r"confirm|pay|place order|checkout|delete|apply|update|add)\b",
    re.IGNORECASE,
)
SUBMIT_TODO = (
    "TODO: add `expect:` (what shows that this submission happened); "
    "the recipe does not validate until then"
)


def mark_submissions(steps: Sequence[DraftStep]) -> list[str]:
    """Set ``effect: submit`` where it belongs; the ids of submissions left without checks."""
    typed = False
    missing: list[str] = []
    for step in steps:
        typed = (typed and "goto" not in step.body) or step.typed  # a goto leaves the form
        if not _submits(step, typed):
            continue
        typed = False
        step.body["effect"] = "submit"
        if not step.body.get("expect"):
            step.comments.append(SUBMIT_TODO)
            missing.append(str(step.body["id"]))
    return missing


def _submits(step: DraftStep, typed: bool) -> bool:
    body = step.body
    enter = "press" in body and body["press"].get("key") == "Enter" and "target" in body["press"]
    if ("click" in body or enter) and _SUBMIT_NAME.search(step.click_name):
        return True
    if not ("click" in body or enter) or not typed:
        return False
    if enter:
        return True
    own_url = [c for c in body.get("expect", []) if "tab" not in c]
    navigates = any("url" in c or "url_regex" in c for c in own_url)
    return navigates or step.navigates
