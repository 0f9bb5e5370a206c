"""Targets to Playwright locators, with the rule that a target matches exactly one element.

The runner never clicks "something close": no match is ``TARGET_MISSING`` naming what
was looked for, several matches are ``TARGET_AMBIGUOUS`` naming the candidates by role
and name (never by the values typed into them).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from typing import Any, Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import FrameLocator, Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from northstar.errors import NorthstarError, TargetAmbiguous, TargetMissing
from northstar.recipe.model import Target
from northstar.redaction import redact

__all__ = ["build_locator", "diagnose_failed_action", "exactly_one", "resolve_one"]

_MAX_CANDIDATES = 5
_STRICT_VIOLATION = "strict mode violation"
_CSS_START = re.compile(r"^\s*(?:iframe\b|[#.\[*])")

# Reads a candidate's role and accessible-ish name without its value.
_DESCRIBE_JS = """(el) => {
  const role = el.getAttribute('role') || el.tagName.toLowerCase();
  const label = el.getAttribute('aria-label')
    || (el.labels && el.labels[0] && el.labels[0].innerText)
    || el.getAttribute('title') || el.getAttribute('alt') || el.getAttribute('name') || '';
  const text = (el.innerText || '').trim().slice(0, 60);
  return [role, (label || text).trim().slice(0, 60)];
}"""


def build_locator(page: Page, target: Target) -> Locator:
    """The Playwright locator for a target, scoped by ``frame`` and ``within``."""
    scope: Page | FrameLocator | Locator = page
    if target.frame is not None:
        scope = page.frame_locator(_frame_selector(target.frame))
    if target.within is not None:
        scope = _scoped(scope, target.within, page)
    return _locate(scope, target)


def _scoped(scope: Page | FrameLocator | Locator, within: Target, page: Page) -> Locator:
    if within.frame is not None and not isinstance(scope, FrameLocator):
        return build_locator(page, within)
    inner: Page | FrameLocator | Locator = scope
    if within.within is not None:
        inner = _scoped(scope, within.within, page)
    return _locate(inner, within)


def _locate(scope: Page | FrameLocator | Locator, target: Target) -> Locator:
    if target.role is not None:
        role: Any = target.role
        return scope.get_by_role(role, name=target.name, exact=target.exact)
    if target.label is not None:
        return scope.get_by_label(target.label, exact=target.exact)
    if target.placeholder is not None:
        return scope.get_by_placeholder(target.placeholder, exact=target.exact)
    if target.text is not None:
        return scope.get_by_text(target.text, exact=target.exact)
    if target.test_id is not None:
        return scope.get_by_test_id(target.test_id)
    assert target.css is not None
    return scope.locator(target.css)


def _frame_selector(frame: str) -> str:
    """CSS when it starts like one (``iframe``, ``#``, ``.``, ``[``, ``*``), else name or title.

    Titles are words a person reads and often hold spaces ("Payment frame"), so spaces and
    punctuation inside a value do not make it CSS; only its start does.
    """
    if _CSS_START.match(frame):
        return frame
    quoted = frame.replace("\\", "\\\\").replace('"', '\\"')
    return f'iframe[name="{quoted}"], iframe[title="{quoted}"]'


async def resolve_one(
    page: Page,
    target: Target,
    *,
    timeout_ms: int,
    state: Literal["attached", "visible"] = "visible",
    secrets: Collection[str] = (),
) -> Locator:
    """Wait until exactly one element matches and is in ``state``; its locator.

    One strict, auto-waiting call: Playwright's ``wait_for`` fails at once when a second
    element matches, and only then is the page asked for the candidates to name.
    """
    locator = build_locator(page, target)
    async with exactly_one(locator, target, timeout_ms=timeout_ms, state=state, secrets=secrets):
        await locator.wait_for(state=state, timeout=timeout_ms)
    return locator


@asynccontextmanager
async def exactly_one(
    locator: Locator,
    target: Target,
    *,
    timeout_ms: int,
    state: Literal["attached", "visible"],
    secrets: Collection[str] = (),
) -> AsyncIterator[None]:
    """Strict Playwright calls on ``locator`` inside: a timeout is ``TARGET_MISSING``, a
    strict-mode violation ``TARGET_AMBIGUOUS`` naming the candidates.

    Any other Playwright error (a closed tab, a bad selector) propagates for the caller's
    ``converted_errors`` to classify.
    """
    try:
        yield
    except PlaywrightTimeoutError as exc:
        raise _missing(target, timeout_ms, state, secrets) from exc
    except PlaywrightError as exc:
        if _STRICT_VIOLATION not in str(exc):
            raise
        raise await _ambiguous(locator, await locator.count(), target, secrets) from exc


async def diagnose_failed_action(
    locator: Locator,
    target: Target,
    failure: NorthstarError,
    *,
    timeout_ms: int,
    state: Literal["attached", "visible"],
    secrets: Collection[str] = (),
) -> NorthstarError:
    """Why a direct action on ``target`` failed: missing, ambiguous, or not actionable.

    Actions that send nothing go straight to Playwright, whose actions auto-wait and are
    strict; only when one fails is the page asked what the target matched, so a missing
    or ambiguous target is reported exactly as ``resolve_one`` would.
    """
    count = await locator.count()
    if count == 0:
        return _missing(target, timeout_ms, state, secrets)
    if count > 1:
        return await _ambiguous(locator, count, target, secrets)
    if state == "visible" and not await locator.is_visible():
        return _missing(target, timeout_ms, state, secrets)
    return failure


def _missing(
    target: Target, timeout_ms: int, state: str, secrets: Collection[str]
) -> TargetMissing:
    return TargetMissing(
        f"no element matches {redact(target.describe(), secrets)} "
        f"(waited {timeout_ms} ms for it to be {state})"
    )


async def _ambiguous(
    locator: Locator, count: int, target: Target, secrets: Collection[str]
) -> TargetAmbiguous:
    candidates = await _candidates(locator, count, secrets)
    return TargetAmbiguous(
        f"{count} elements match {redact(target.describe(), secrets)}: {candidates}"
    )


async def _candidates(locator: Locator, count: int, secrets: Collection[str]) -> str:
    described: list[str] = []
    for i in range(min(count, _MAX_CANDIDATES)):
        try:
            role, name = await locator.nth(i).evaluate(_DESCRIBE_JS, timeout=1000)
        except PlaywrightError:
            continue
        described.append(f'{role} "{redact(name, secrets)}"' if name else role)
    more = f" and {count - _MAX_CANDIDATES} more" if count > _MAX_CANDIDATES else ""
    return ", ".join(described) + more
