"""Filling text fields and rich editors so that the text reaches what the page submits.

A rich editor (a ``contenteditable`` driven by Draft.js, ProseMirror, Quill, Lexical,
TinyMCE) keeps the text in its own model and writes it into the form later (Draftail writes
its hidden field 250 ms after the last change). A fill that returns as soon as the DOM shows
the text lets a fast submit send an empty body. So a fill on an editor ends only when:

1. the editor shows the text after it settled (blurred, read back after the next animation
   frame): where a plain fill does not take, the text is typed key by key; if it is still not
   there, ``FILL_NOT_APPLIED``;
2. the form around the editor holds the text in one of its fields, waited for (bounded):
   an editor that serialises only when the form is submitted never does, and that is allowed
   (the recipe's check of the page the server produced decides).
"""

from __future__ import annotations

from playwright.async_api import Locator
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from northstar.errors import FillNotApplied
from northstar.recipe.model import FillAction

__all__ = ["fill_text", "form_mirror_wait_ms"]

# How long the form may take to receive an editor's text: well above a 250 ms debounce.
FORM_MIRROR_MS = 5_000

_IS_EDITOR = """el => el.isContentEditable
    && !(el instanceof HTMLInputElement) && !(el instanceof HTMLTextAreaElement)"""

# Blur the editor (many editors save on blur), then read its text after the next frame.
_SETTLED_TEXT = """async el => {
    el.blur();
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    return el.innerText;
}"""

# True once a field of the editor's form (other than the editor) holds every line of `text`,
# as typed, JSON-escaped (raw editor state) or HTML-escaped (serialised markup).
_FORM_HOLDS = """([el, text]) => {
    const form = el.closest("form");
    if (!form) return true;
    const html = s => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    const lines = text.split("\\n").map(s => s.trim()).filter(Boolean);
    const holds = (value, line) => value.includes(line)
        || value.includes(JSON.stringify(line).slice(1, -1)) || value.includes(html(line));
    return Array.from(form.elements).some(field => "value" in field
        && typeof field.value === "string" && lines.every(line => holds(field.value, line)));
}"""


def _normal(text: str) -> str:
    """Text compared without its whitespace layout (editors wrap lines in blocks)."""
    return " ".join(text.split())


def form_mirror_wait_ms(left_ms: float) -> float:
    """The bound of the wait for the form to hold an editor's text: the step's time left,
    at most ``FORM_MIRROR_MS``."""
    return min(left_ms, FORM_MIRROR_MS)


async def fill_text(locator: Locator, fill: FillAction, timeout_ms: float, what: str) -> None:
    """Fill a field or an editor with ``fill.value``; ``what`` names the step in an error."""
    if not await locator.evaluate(_IS_EDITOR, timeout=timeout_ms):
        await _put_text(locator, fill, timeout_ms)
        return
    await _put_text(locator, fill, timeout_ms)
    if _normal(await locator.evaluate(_SETTLED_TEXT)) != _normal(fill.value):
        await _clear(locator, timeout_ms)
        await locator.press_sequentially(fill.value, delay=fill.delay, timeout=timeout_ms)
        shown = await locator.evaluate(_SETTLED_TEXT)
        if _normal(shown) != _normal(fill.value):
            raise FillNotApplied(
                f"{what}: the editor shows {len(_normal(shown))} characters after it settled, "
                f"not the {len(_normal(fill.value))} typed"
            )
    await _form_holds(locator, fill.value, form_mirror_wait_ms(timeout_ms))


async def _put_text(locator: Locator, fill: FillAction, timeout_ms: float) -> None:
    if fill.type:
        await _clear(locator, timeout_ms)
        await locator.press_sequentially(fill.value, delay=fill.delay, timeout=timeout_ms)
    else:
        await locator.fill(fill.value, timeout=timeout_ms)


async def _clear(locator: Locator, timeout_ms: float) -> None:
    """Empty a field or an editor the way a person does: select all, delete."""
    await locator.click(timeout=timeout_ms)
    await locator.press("ControlOrMeta+a", timeout=timeout_ms)
    await locator.press("Delete", timeout=timeout_ms)


async def _form_holds(locator: Locator, value: str, timeout_ms: float) -> None:
    """Wait until the editor's form holds the text; give up quietly when it never does."""
    page = locator.page
    handle = await locator.element_handle(timeout=timeout_ms)
    if handle is None:
        return
    try:
        await page.wait_for_function(_FORM_HOLDS, arg=[handle, value], timeout=timeout_ms)
    except PlaywrightTimeoutError:
        return
    finally:
        await handle.dispose()
