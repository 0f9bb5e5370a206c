"""Read an ``Observation`` of one tab with Playwright.

Up to three reads, then pure assembly in ``northstar.monitor.observation``:

1. At once (one round trip): per frame, one small script (the title, media state of
   images, video and audio, whose playback state is not in the accessibility tree, and
   the password fields), and the page's AI-mode aria snapshot
   (``page.aria_snapshot(mode="ai")``), which includes iframes and element references
   valid until the next snapshot of the page.
2. Only when a frame has password fields: for each, its own AI-mode aria snapshot, only to
   learn its reference. Playwright keeps an element's reference while its role and name
   stay the same, so the page snapshot names the field with the same reference.
3. Only then, the page's snapshot again: any AI-mode snapshot replaces the one that
   ``aria-ref=`` locators resolve against, so the page's must be the last one taken.

Secret values and the values of password fields are redacted before the observation exists:
a password field's value wherever it shows (a field beside it, a message, the URL), not only
in the field, and the caller hears of it (``seen_passwords``) to redact it from then on.
The raw snapshot text stays only in the page's ``SnapshotReader``, in this process's memory,
to tell the next snapshot's unchanged subtrees (its keys); it is never in an observation,
a log, the journal or an answer, and goes with the page.
"""

from __future__ import annotations

import asyncio
import uuid
import weakref
from collections.abc import Callable, Collection, Sequence

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Locator, Page
from pydantic import BaseModel, ConfigDict, Field

from browser_adapters.error_mapping import converted_errors
from northstar.monitor.fingerprints import resolve_reference
from northstar.monitor.observation import (
    ElementRef,
    FrameScope,
    MediaState,
    Observation,
    assemble_observation,
    parse_aria_snapshot,
    scrub_secrets,
)
from northstar.monitor.snapshot_reader import SnapshotReader

__all__ = ["capture_observation", "reference_locator"]

# Enough for any real form; bounds the extra snapshots a hostile page could cause.
_MAX_PASSWORD_FIELDS = 20
_PASSWORD_SNAPSHOT_TIMEOUT_MS = 2_000

# Runs in every frame. Long sources (data: URLs) are cut and tagged with a hash of the whole,
# so two different images never look alike and no megabyte string crosses the wire.
_FRAME_STATE_JS = """
() => {
  const shorten = (src) => {
    if (src.length <= 200) return src;
    let hash = 2166136261;
    for (let i = 0; i < src.length; i++) hash = Math.imul(hash ^ src.charCodeAt(i), 16777619);
    return src.slice(0, 80) + '…#' + (hash >>> 0).toString(16) + '/' + src.length;
  };
  const media = [];
  for (const el of document.querySelectorAll('img, video, audio')) {
    if (media.length >= 200) break;
    const tag = el.tagName.toLowerCase();
    if (tag !== 'audio' && el.checkVisibility && !el.checkVisibility()) continue;
    const name = el.getAttribute('alt') || el.getAttribute('aria-label') || el.title || '';
    const item = {kind: tag === 'img' ? 'image' : tag, name,
                  src: shorten(el.currentSrc || el.getAttribute('src') || '')};
    if (tag === 'img') {
      item.loaded = el.complete && el.naturalWidth > 0;
    } else {
      item.paused = el.paused; item.ended = el.ended; item.muted = el.muted;
      item.current_time = Number.isFinite(el.currentTime) ? el.currentTime : 0;
    }
    media.push(item);
  }
  const passwords = Array.from(document.querySelectorAll('input[type=password]'));
  return {title: document.title, media, password_count: passwords.length,
          password_values: passwords.map((p) => p.value).filter(Boolean)};
}
"""


class _FrameState(BaseModel):
    """What the frame script returns, validated at the boundary."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    title: str = ""
    media: tuple[MediaState, ...] = ()
    password_count: int = Field(0, ge=0)
    password_values: tuple[str, ...] = ()


_EMPTY = _FrameState()

# One reader per page: a later snapshot of the tab parses only the subtrees that changed.
_READERS: weakref.WeakKeyDictionary[Page, SnapshotReader] = weakref.WeakKeyDictionary()


async def capture_observation(
    page: Page,
    *,
    role: str,
    secret_values: Collection[str] = (),
    snapshot_id: str | None = None,
    seen_passwords: Callable[[Collection[str]], None] = lambda values: None,
) -> Observation:
    """Observe the tab that plays ``role``; its references stay valid until the next one.

    Raises ``TabClosed`` if the page is gone, and another ``BrowserError`` if it cannot be read.
    """
    async with converted_errors(f"observe tab {role!r}", tab=role, secrets=secret_values):
        frames = [f for f in page.frames if not f.is_detached()]
        # The frame script and the page snapshot travel together: one round trip, not two.
        states, snapshot_text = await asyncio.gather(
            asyncio.gather(*(_frame_state(page, f) for f in frames)),
            page.aria_snapshot(mode="ai"),
        )
        sensitive_refs = await _password_refs(page, frames, states)
        if sensitive_refs or any(s.password_count for s in states):
            # A field's own snapshot replaced the page's: take the page's again, last.
            snapshot_text = await page.aria_snapshot(mode="ai")
    passwords = [v for s in states for v in s.password_values]
    seen_passwords(passwords)
    secret_values = {*secret_values, *passwords}
    parsed = _READERS.setdefault(page, SnapshotReader()).read(
        snapshot_text,
        secret_values=secret_values,
        sensitive_refs=sensitive_refs,
        password_values=passwords,
    )
    return assemble_observation(
        parsed,
        scrub_secrets(secret_values),
        tab=role,
        url=page.url,
        title=states[0].title if states else "",
        snapshot_id=snapshot_id or uuid.uuid4().hex,
        frames=_frame_scope(frames),
        media=[m for s in states for m in s.media],
    )


def reference_locator(page: Page, current: Observation, ref: str | ElementRef) -> Locator:
    """A locator for a reference of the tab's current observation, or ``StaleReference``.

    ``current`` must be the latest observation of ``page``: Playwright resolves ``aria-ref``
    against the page's latest AI-mode snapshot only.
    """
    node = resolve_reference(current, ref)
    return page.locator(f"aria-ref={node.ref}")


async def _frame_state(page: Page, frame: Frame) -> _FrameState:
    """One frame's title, media and password fields; an empty reading if the frame went away.

    A child frame may navigate or detach while the tab is read; that frame then has nothing
    to report, which is what the page snapshot will show as well. A closed page is an error.
    """
    try:
        return _FrameState.model_validate(await frame.evaluate(_FRAME_STATE_JS))
    except PlaywrightError:
        if page.is_closed() or frame is page.main_frame:
            raise
        return _EMPTY


async def _password_refs(
    page: Page, frames: Sequence[Frame], states: Sequence[_FrameState]
) -> set[str]:
    refs: set[str] = set()
    for frame, state in zip(frames, states, strict=True):
        fields = frame.locator("input[type=password]")
        for index in range(min(state.password_count, _MAX_PASSWORD_FIELDS)):
            ref = await _ref_of(page, fields.nth(index))
            if ref is not None:
                refs.add(ref)
    return refs


async def _ref_of(page: Page, field: Locator) -> str | None:
    """The reference Playwright gives one element, from its own AI-mode snapshot.

    A hidden or vanished field has none; its value is still caught by the value check.
    """
    try:
        text = await field.aria_snapshot(mode="ai", timeout=_PASSWORD_SNAPSHOT_TIMEOUT_MS)
    except PlaywrightError:
        if page.is_closed():
            raise
        return None
    nodes = parse_aria_snapshot(text)
    return nodes[0].ref if nodes else None


def _frame_scope(frames: Sequence[Frame]) -> tuple[FrameScope, ...]:
    index = {id(frame): i for i, frame in enumerate(frames)}
    return tuple(
        FrameScope(
            index=i,
            name=frame.name,
            url=frame.url,
            parent=None if frame.parent_frame is None else index.get(id(frame.parent_frame)),
        )
        for i, frame in enumerate(frames)
    )
