"""What an action resolved to: the element's role, name and tag, read in one call.

A journal that says "clicked button Submit" cannot tell the renamed button from the
"Submit feedback" one beside it; this module reads what was really there, right before
the action, with one call on the locator the action then uses. For a
submission it also names where the form goes. The same call lists a ``select``'s
options, so a choice that is not there fails at once with the options named, instead
of after the step's timeout.

Where the read runs: Playwright resolves a locator and acts on it in its isolated
"utility" world, where its selector machinery already lives for every document.
``evaluate_all`` runs in the page's main world instead, and the first such call on a
document builds that machinery a second time, there: on a form page that is most of
what the read costs (``scripts/run_cost_breakdown.py``). So the read is a selector
engine of Northstar's own, registered as a content script (``register_facts_engine``):
chained after the step's locator (``... >> northstar-facts=act``) it runs in the utility
world on the one element the locator matches and answers with a detached element whose
text is the facts as JSON, read by ``text_content``: one strict, auto-waiting call, the
page's DOM untouched and the page's own scripts unable to see or change the read. A
page whose Playwright has no such engine (one a pytest-playwright test made) is read
in the main world as before; the facts are the same.

The script never reads an element's value: a name comes from ARIA attributes, labels,
a button's caption or the element's own text, and text of an element a person types
into is skipped. The step's choices never reach the page (an engine's body shows in
Playwright's logs and traces): the options are compared with them here. Everything is
redacted with the plan's secrets before it is kept.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from playwright.async_api import BrowserContext, Locator, Playwright
from playwright.async_api import Error as PlaywrightError

from northstar.errors import OptionMissing
from northstar.recipe.model import SelectAction
from northstar.redaction import redact

__all__ = [
    "FACTS_ENGINE",
    "ActedOn",
    "SelectChoices",
    "describe_acted_on",
    "register_facts_engine",
    "select_choices",
]

_MAX_SHOWN_OPTIONS = 12
_MAX_OPTION_CHARS = 40

# (el, submit) -> plain facts; never reads `value` of a field.
_ACTED_ON_JS = """(el, submit) => {
  const clip = (s) => (s || '').replace(/\\s+/g, ' ').trim().slice(0, 80);
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute('type') || '').toLowerCase();
  const inputRoles = {checkbox: 'checkbox', radio: 'radio', submit: 'button', button: 'button',
    reset: 'button', image: 'button', range: 'slider', number: 'spinbutton',
    search: 'searchbox', file: ''};
  const tagRoles = {button: 'button', textarea: 'textbox', img: 'img', form: 'form',
    nav: 'navigation', main: 'main', ul: 'list', ol: 'list', li: 'listitem', table: 'table',
    tr: 'row', td: 'cell', th: 'columnheader', option: 'option', dialog: 'dialog',
    h1: 'heading', h2: 'heading', h3: 'heading', h4: 'heading', h5: 'heading', h6: 'heading'};
  const implicit = () => {
    if (tag === 'a') return el.hasAttribute('href') ? 'link' : '';
    if (tag === 'input') return type in inputRoles ? inputRoles[type] : 'textbox';
    if (tag === 'select') return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    return tagRoles[tag] || '';
  };
  const role = (el.getAttribute('role') || '').trim().split(/\\s+/)[0] || implicit();
  const typedInto = el.isContentEditable || tag === 'select' || tag === 'textarea'
    || ['textbox', 'searchbox', 'combobox', 'spinbutton'].includes(role);
  const byIds = (ids) => ids.split(/\\s+/).map((id) => document.getElementById(id))
    .filter(Boolean).map((n) => n.textContent).join(' ');
  const labelledBy = el.getAttribute('aria-labelledby');
  let name = clip(el.getAttribute('aria-label')) || clip(labelledBy && byIds(labelledBy));
  if (!name && el.labels && el.labels.length)
    name = clip(Array.from(el.labels).map((l) => l.innerText).join(' '));
  if (!name && tag === 'input' && ['submit', 'button', 'reset'].includes(type))
    name = clip(el.getAttribute('value')) || (type === 'submit' ? 'Submit' : '');
  if (!name && !typedInto && tag !== 'input') name = clip(el.innerText);
  if (!name) name = clip(el.getAttribute('title') || el.getAttribute('alt')
    || el.getAttribute('placeholder'));
  const submitter = (tag === 'button' && (type === '' || type === 'submit'))
    || (tag === 'input' && (type === 'submit' || type === 'image'));
  const form = el.form || el.closest('form');
  let action = null;
  let method = null;
  if (form && (submit || submitter)) {
    const own = submitter && el.hasAttribute('formaction');
    // The prototype's getter: a field named "action" cannot shadow it.
    action = own ? el.formAction
      : Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, 'action').get.call(form);
    method = ((submitter && el.getAttribute('formmethod')) || form.getAttribute('method')
      || 'get').toUpperCase();
  }
  // A select's options as [value, label]: compared with the step's choices in Python.
  const options = tag === 'select' ? Array.from(el.options).map((o) => [o.value, o.label]) : null;
  // Playwright's visibility: rendered (checkVisibility), a non-empty box, not hidden.
  const box = el.getBoundingClientRect();
  const visible = (!el.checkVisibility || el.checkVisibility())
    && box.width > 0 && box.height > 0 && getComputedStyle(el).visibility === 'visible';
  return {role, name, tag, type: tag === 'input' ? (type || 'text') : '', action, method,
    options, visible};
}"""
# Two at most: one is the answer, a second only says that the target is not unique.
_EACH_JS = f"(elements, submit) => elements.slice(0, 2).map((el) => ({_ACTED_ON_JS})(el, submit))"

FACTS_ENGINE = "northstar-facts"
# Called once per element the chain before it matches; the body is "submit" or "act".
_ENGINE_JS = f"""{{
  queryAll(root, body) {{
    const facts = ({_ACTED_ON_JS})(root, body === 'submit');
    const answer = root.ownerDocument.createElement('template');
    answer.textContent = JSON.stringify(facts);
    return [answer];
  }}
}}"""
_UNKNOWN_ENGINE = f'Unknown engine "{FACTS_ENGINE}"'
# Contexts whose Playwright has no facts engine: read in the main world, and asked once.
_WITHOUT_ENGINE: weakref.WeakSet[BrowserContext] = weakref.WeakSet()

# JavaScript's whitespace (``trim``, ``\\s``): a label compares here as in the page.
_JS_SPACE_CHARS = (
    "".join(map(chr, [9, 10, 11, 12, 13, 32, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029]))
    + "\u202f\u205f\u3000\ufeff"
)
_JS_SPACES = re.compile(f"[{re.escape(_JS_SPACE_CHARS)}]+")
_INVISIBLE = re.compile("[\u200b\u00ad]")


@dataclass(frozen=True, slots=True)
class SelectChoices:
    """What a ``select`` step asks for: strings matched like Playwright matches them."""

    value_or_label: tuple[str, ...] = ()  # `value` / `values`: an option's value or label
    labels: tuple[str, ...] = ()  # `label`: an option's label only

    def missing(self, options: Sequence[tuple[str, str]]) -> tuple[str, ...]:
        """The choices no option (``(value, label)``) has, as the page would compare them."""
        labels = {label for _, label in options} | {_normalised(label) for _, label in options}
        values = {value for value, _ in options}

        def has_label(label: str) -> bool:
            return label in labels or _normalised(label) in labels

        missing = [v for v in self.value_or_label if v not in values and not has_label(v)]
        return (*missing, *(label for label in self.labels if not has_label(label)))


def select_choices(select: SelectAction | None) -> SelectChoices:
    """The choices of a select step (none for any other step)."""
    if select is None:
        return SelectChoices()
    if select.label is not None:
        return SelectChoices(labels=(select.label,))
    wanted = select.values if select.values is not None else [select.value or ""]
    return SelectChoices(value_or_label=tuple(wanted))


def _normalised(label: str) -> str:
    """A label as ``select_option`` matches it: no soft hyphen or zero-width space, spaces
    trimmed and runs of them one space, by JavaScript's idea of a space."""
    return _JS_SPACES.sub(" ", _INVISIBLE.sub("", label).strip(_JS_SPACE_CHARS))


@dataclass(frozen=True, slots=True)
class ActedOn:
    """The facts about the element an action resolved to (already redacted)."""

    role: str
    name: str
    tag: str
    input_type: str = ""
    form_method: str | None = None
    form_action: str | None = None
    options: tuple[str, ...] | None = None  # a select's options, "value (label)"
    missing: tuple[str, ...] = ()  # choices of a select step that no option has
    visible: bool = False  # visible as Playwright means it, when it was read

    @classmethod
    def from_facts(
        cls,
        facts: dict[str, Any],
        secrets: Collection[str],
        choices: SelectChoices | None = None,
    ) -> ActedOn:
        """The script's answer as plain data, every string redacted with ``secrets``;
        a select's options are compared with ``choices`` first."""

        def shown(value: Any) -> str:
            return redact(str(value or ""), secrets)

        pairs = facts.get("options")
        options = None if pairs is None else [(str(v), str(label)) for v, label in pairs]
        action = facts.get("action")
        missing = (choices or SelectChoices()).missing(options or ())
        return cls(
            role=shown(facts.get("role")),
            name=shown(facts.get("name")),
            tag=shown(facts.get("tag")),
            input_type=shown(facts.get("type")),
            form_method=shown(facts.get("method")) if action is not None else None,
            form_action=shown(action) if action is not None else None,
            options=None if options is None else _redacted(_shown_options(options), secrets),
            missing=_redacted(missing, secrets) if options is not None else (),
            visible=facts.get("visible") is True,
        )

    def summary(self) -> str:
        """One line for the journal: ``button "Send" <button>; submits form: POST URL``."""
        tag = f"<{self.tag} type={self.input_type}>" if self.input_type else f"<{self.tag}>"
        parts = [self.role, f'"{self.name}"' if self.name else "", tag]
        text = " ".join(p for p in parts if p)
        if self.form_action is not None:
            text += f"; submits form: {self.form_method or 'GET'} {self.form_action}"
        return text

    def option_missing(self, what: str, *, waited: bool = False) -> OptionMissing | None:
        """``OPTION_MISSING`` naming the missing choices and the options, or ``None``.

        Before the action (``waited`` false) a select with no options at all may still be
        loading them, so only Playwright's wait decides; after it timed out, it does not.
        """
        if not self.missing or not (self.options or waited):
            return None
        options = self.options or ()
        shown = [_clip(o, _MAX_OPTION_CHARS) for o in options[:_MAX_SHOWN_OPTIONS]]
        more = len(options) - len(shown)
        listed = ", ".join(shown) + (f" and {more} more" if more > 0 else "")
        wanted = ", ".join(repr(m) for m in self.missing)
        where = f"the options are: {listed}" if options else "the select has no options"
        return OptionMissing(f"{what}: no option has the value or label {wanted}; {where}")


def _shown_options(options: Sequence[tuple[str, str]]) -> list[str]:
    """``value`` when the label says the same, else ``value (label)``."""
    return [v if _normalised(label) == v else f"{v} ({_normalised(label)})" for v, label in options]


async def register_facts_engine(playwright: Playwright) -> None:
    """Register the facts engine with ``playwright``, for its contexts made before or after.

    Once per Playwright instance; a second call on the same one changes nothing.
    """
    try:
        await playwright.selectors.register(FACTS_ENGINE, _ENGINE_JS, content_script=True)
    except PlaywrightError as exc:
        if "already registered" not in str(exc):
            raise


async def describe_acted_on(
    locator: Locator,
    *,
    timeout_ms: float,
    submit: bool,
    choices: SelectChoices | None = None,
    secrets: Collection[str] = (),
) -> ActedOn:
    """Read the one element ``locator`` matches, waiting (strictly) until it is attached.

    Errors are Playwright's, as from an action on ``locator``: a timeout when nothing
    matched in time, a strict-mode violation at once when several match.
    """
    context = locator.page.context
    if context not in _WITHOUT_ENGINE:
        engine = locator.locator(f"{FACTS_ENGINE}={'submit' if submit else 'act'}")
        try:
            text = await engine.text_content(timeout=timeout_ms)
        except PlaywrightError as exc:
            if _UNKNOWN_ENGINE not in str(exc):
                raise
            _WITHOUT_ENGINE.add(context)
        else:
            return ActedOn.from_facts(json.loads(text or "{}"), secrets, choices)
    facts = await _read_in_main_world(locator, timeout_ms, submit)
    return ActedOn.from_facts(facts, secrets, choices)


async def _read_in_main_world(locator: Locator, timeout_ms: float, submit: bool) -> dict[str, Any]:
    """The facts by ``evaluate_all``: one call when the element is there already.

    (``evaluate`` on a locator takes three: a handle, the script, its release.) Only
    otherwise does a strict ``wait_for`` run, and a strict ``evaluate``.
    """
    found: list[dict[str, Any]] = await locator.evaluate_all(_EACH_JS, submit)
    if len(found) == 1:
        return found[0]
    await locator.wait_for(state="attached", timeout=timeout_ms)  # none: waits; 2+: fails
    # Strict, like the wait; unlike evaluate_all it also resolves an agent's ``aria-ref=``
    # locator (evaluate_all finds no element for one).
    facts: dict[str, Any] = await locator.evaluate(_ACTED_ON_JS, submit, timeout=timeout_ms)
    return facts


def _redacted(values: Sequence[Any], secrets: Collection[str]) -> tuple[str, ...]:
    return tuple(redact(str(v), secrets) for v in values)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
