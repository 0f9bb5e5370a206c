"""What an action resolved to: the element's role, name and tag, read in one call.

A journal that says "clicked button Submit" cannot tell the renamed button from the
"Submit feedback" one beside it; this module reads what was really there, right before
the action, with one call on the locator the action then uses. For a
submission it also names where the form goes. The same call checks a ``select``'s
choices against its options, so a value that is not there fails at once with the
options named, instead of after the step's timeout.

The script never reads an element's value: a name comes from ARIA attributes, labels,
a button's caption or the element's own text, and text of an element a person types
into is skipped. Everything is redacted with the plan's secrets before it is kept.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Locator

from northstar.errors import OptionMissing
from northstar.recipe.model import SelectAction
from northstar.redaction import redact

__all__ = [
    "ActedOn",
    "SelectChoices",
    "acted_on_if_visible",
    "describe_acted_on",
    "select_choices",
]

_MAX_SHOWN_OPTIONS = 12
_MAX_OPTION_CHARS = 40

# (el, {submit, valueOrLabel, labels}) -> plain facts; never reads `value` of a field.
_ACTED_ON_JS = """(el, arg) => {
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
  if (form && (arg.submit || submitter)) {
    const own = submitter && el.hasAttribute('formaction');
    // The prototype's getter: a field named "action" cannot shadow it.
    action = own ? el.formAction
      : Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, 'action').get.call(form);
    method = ((submitter && el.getAttribute('formmethod')) || form.getAttribute('method')
      || 'get').toUpperCase();
  }
  let options = null;
  let missing = [];
  if (tag === 'select') {
    const norm = (s) => s.replace(/[\\u200b\\u00ad]/g, '').trim().replace(/\\s+/g, ' ');
    const all = Array.from(el.options);
    const hasLabel = (l) => all.some((o) => o.label === l || norm(o.label) === norm(l));
    const hasValue = (v) => all.some((o) => o.value === v) || hasLabel(v);
    missing = arg.valueOrLabel.filter((v) => !hasValue(v))
      .concat(arg.labels.filter((l) => !hasLabel(l)));
    options = all.map((o) => norm(o.label) === o.value ? o.value : `${o.value} (${norm(o.label)})`);
  }
  // Playwright's visibility: rendered (checkVisibility), a non-empty box, not hidden.
  const box = el.getBoundingClientRect();
  const visible = (!el.checkVisibility || el.checkVisibility())
    && box.width > 0 && box.height > 0 && getComputedStyle(el).visibility === 'visible';
  return {role, name, tag, type: tag === 'input' ? (type || 'text') : '', action, method,
    options, missing, visible};
}"""
# Two at most: one is the answer, a second only says that the target is not unique.
_EACH_JS = f"(elements, arg) => elements.slice(0, 2).map((el) => ({_ACTED_ON_JS})(el, arg))"


@dataclass(frozen=True, slots=True)
class SelectChoices:
    """What a ``select`` step asks for: strings matched like Playwright matches them."""

    value_or_label: tuple[str, ...] = ()  # `value` / `values`: an option's value or label
    labels: tuple[str, ...] = ()  # `label`: an option's label only

    def as_arg(self) -> dict[str, list[str]]:
        return {"valueOrLabel": list(self.value_or_label), "labels": list(self.labels)}


def select_choices(select: SelectAction | None) -> SelectChoices:
    """The choices of a select step (none for any other step)."""
    if select is None:
        return SelectChoices()
    if select.label is not None:
        return SelectChoices(labels=(select.label,))
    wanted = select.values if select.values is not None else [select.value or ""]
    return SelectChoices(value_or_label=tuple(wanted))


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
    def from_facts(cls, facts: dict[str, Any], secrets: Collection[str]) -> ActedOn:
        """The script's answer as plain data, every string redacted with ``secrets``."""

        def shown(value: Any) -> str:
            return redact(str(value or ""), secrets)

        options = facts.get("options")
        action = facts.get("action")
        return cls(
            role=shown(facts.get("role")),
            name=shown(facts.get("name")),
            tag=shown(facts.get("tag")),
            input_type=shown(facts.get("type")),
            form_method=shown(facts.get("method")) if action is not None else None,
            form_action=shown(action) if action is not None else None,
            options=None if options is None else _redacted(options, secrets),
            missing=_redacted(facts.get("missing") or (), secrets),
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


async def describe_acted_on(
    locator: Locator,
    *,
    timeout_ms: float,
    submit: bool,
    choices: SelectChoices | None = None,
    secrets: Collection[str] = (),
) -> ActedOn:
    """Read the one element ``locator`` matches, waiting (strictly) until it is attached.

    ``evaluate_all`` is one call to the page (``evaluate`` on a locator takes three: a
    handle, the script, its release), so an element that is already there costs one
    round trip; only otherwise does a strict ``wait_for`` run, and a strict ``evaluate``.
    """
    arg = {"submit": submit, **(choices or SelectChoices()).as_arg()}
    found: list[dict[str, Any]] = await locator.evaluate_all(_EACH_JS, arg)
    if len(found) == 1:
        return ActedOn.from_facts(found[0], secrets)
    await locator.wait_for(state="attached", timeout=timeout_ms)  # none: waits; 2+: fails
    # Strict, like the wait; unlike evaluate_all it also resolves an agent's ``aria-ref=``
    # locator (evaluate_all finds no element for one).
    facts: dict[str, Any] = await locator.evaluate(_ACTED_ON_JS, arg, timeout=timeout_ms)
    return ActedOn.from_facts(facts, secrets)


async def acted_on_if_visible(
    locator: Locator,
    *,
    submit: bool,
    choices: SelectChoices | None = None,
    secrets: Collection[str] = (),
) -> ActedOn | None:
    """The one element ``locator`` matches if it is visible now, else ``None``; one call.

    A submission must resolve to exactly one visible element before its in-flight record
    is written. When the read finds that already, a separate strict wait would only ask
    the page again; ``None`` (none, several, or not visible yet) leaves it to that wait.
    """
    arg = {"submit": submit, **(choices or SelectChoices()).as_arg()}
    found: list[dict[str, Any]] = await locator.evaluate_all(_EACH_JS, arg)
    if len(found) != 1 or found[0].get("visible") is not True:
        return None
    return ActedOn.from_facts(found[0], secrets)


def _redacted(values: Sequence[Any], secrets: Collection[str]) -> tuple[str, ...]:
    return tuple(redact(str(v), secrets) for v in values)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
