"""The lint rules: each a pure function from a valid recipe to its findings, with a code.

A finding is advice, never an error: the recipe runs as it is. Each names the field path it
is about (the driver turns it into ``file:line:column``), says what is fragile and why, and
gives a better form: derived from the element when the page was read (``--live URL``: its
role and accessible name), else from what the step does with it (a field that is filled is
a textbox, a box that is checked a checkbox), else from the recipe itself.

``RULES`` lists every rule with its code and whether it runs by default; a rule that is
advice some projects do not want (a reconcile probe for every submission) is off until
selected. ``docs/drafts/lint.md`` documents each code with an example.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from northstar.lint._walk import flow, iter_targets, iter_texts, iter_values, origin_of
from northstar.recipe.model import ACTION_KINDS, Check, Recipe, Step, Target, TextCheck
from northstar.recipe.templates import template_names

__all__ = [
    "CODES",
    "DEFAULT_CODES",
    "RULES",
    "Finding",
    "LintContext",
    "LiveElement",
    "Rule",
    "large_page_lookups",
]


@dataclass(frozen=True)
class Finding:
    code: str
    path: str
    message: str
    better: str | None = None


@dataclass(frozen=True)
class LiveElement:
    """What the page said about the one element a CSS target matched (``--live URL``)."""

    role: str
    name: str


@dataclass(frozen=True)
class LintContext:
    """What lint knows beyond the recipe: recorded page sizes (elements) per tab role, and
    the role and name of the elements CSS targets matched on a live page, by selector."""

    page_sizes: Mapping[str, int] | None = None
    live: Mapping[str, LiveElement] | None = None


LARGE_PAGE_ELEMENTS = 1500
_POSITIONAL = re.compile(
    r":(nth-child|nth-last-child|nth-of-type|nth-last-of-type|nth-match|first-child|"
    r"last-child|first-of-type|last-of-type|first|last)\b|>>\s*nth="
)
_CSS_ATTRIBUTE = re.compile(
    r"""^\w*\[(data-testid|aria-label|placeholder)\s*=\s*["']?([^"'\]]+)["']?\]$"""
)
_CSS_TO_TARGET = {"data-testid": "test_id", "aria-label": "label", "placeholder": "placeholder"}
_URL_FIELDS = re.compile(r"(^tabs\.[^.]+\.(start|origins\[\d+\])|\.goto|\.url|\.after_submit)$")


def css_targets(recipe: Recipe, context: LintContext) -> Iterator[Finding]:
    for path, target in iter_targets(recipe):
        if target.css is None:
            continue
        if _POSITIONAL.search(target.css):
            yield Finding(
                "LINT_POSITION_TARGET",
                f"{path}.css",
                f"target {target.css!r} depends on the element's position",
                "scope it by what holds it: {role: ..., name: ..., within: {role: row, name: ...}}",
            )
        else:
            better = _from_css(target, path, (context.live or {}).get(target.css))
            yield Finding("LINT_CSS_TARGET", f"{path}.css", f"target {target.css!r} is CSS", better)


# What a step does with its target says what the element is: a role and how to name it.
_ROLE_BY_KIND = {
    "fill": ("textbox", "{label: <its label>}, or {role: textbox, name: <its label>}"),
    "press": ("textbox", "{label: <its label>}, or {role: textbox, name: <its label>}"),
    "check": ("checkbox", "{role: checkbox, name: <its label>}"),
    "uncheck": ("checkbox", "{role: checkbox, name: <its label>}"),
    "select": ("combobox", "{label: <its label>}, or {role: combobox, name: <its label>}"),
    "upload": ("file input", "{label: <its label>}"),
    "click": ("button or link", "{role: button, name: <its text>} (or role: link)"),
}
_KIND_IN_PATH = re.compile(r"^steps\[\d+\]\.(\w+)\.target")


def _from_css(target: Target, path: str, live: LiveElement | None) -> str:
    """The better target: from the live element, an attribute in the selector, or the step."""
    frame = {"frame": target.frame} if target.frame else {}
    if live is not None:
        return flow(
            {"role": live.role, "name": live.name, **frame}
            if live.name
            else {"role": live.role, **frame}
        )
    match = _CSS_ATTRIBUTE.match(target.css or "")
    if match is not None:
        return flow({_CSS_TO_TARGET[match.group(1)]: match.group(2), **frame})
    kind = _KIND_IN_PATH.match(path)
    if kind is not None and kind.group(1) in _ROLE_BY_KIND:
        what, better = _ROLE_BY_KIND[kind.group(1)]
        return f"a {what}: {better}; `northstar lint --live URL` names it"
    return "what a person sees: {role: ..., name: ...}, {label: ...}, {text: ...} or a test_id"


def loose_targets(recipe: Recipe, context: LintContext) -> Iterator[Finding]:
    """Only targets acted on: a substring check or read of a page's text (a confirmation
    with a number in it) is what `exact: false` is for, and a submit step's own loose
    target is refused by ``validate`` unless the step allows it."""
    values = dict(iter_values(recipe))
    for path, target in iter_targets(recipe):
        kind = _KIND_IN_PATH.match(path)
        if kind is None or kind.group(1) not in ACTION_KINDS or target.exact:
            continue
        yield Finding(
            "LINT_LOOSE_TARGET",
            f"{path}.exact",
            f"{target.describe()} acts on any element whose text contains it",
            _whole_text(target, values.get(path.removesuffix(".target"))),
        )


def _whole_text(target: Target, holder: object) -> str:
    """The exact target when the step's text says the whole text (``equals``)."""
    if isinstance(holder, TextCheck) and holder.equals is not None and target.text is not None:
        return flow(target.model_copy(update={"text": holder.equals, "exact": True}))
    return "the element's whole text or name with `exact: true` (the default), or a test_id"


def submits_without_reconcile(recipe: Recipe, context: LintContext) -> Iterator[Finding]:
    for number, step in enumerate(recipe.steps):
        if step.effect == "submit" and not step.reconcile:
            probe = _effect_check(step, recipe)
            yield Finding(
                "LINT_SUBMIT_WITHOUT_RECONCILE",
                f"steps[{number}].effect",
                f"submit step {step.id!r} has no reconcile probe: an unknown outcome "
                "waits for a person",
                "reconcile: [{goto: <a page that lists it>}, {check: "
                + (flow(probe) if probe else "{visible: ...}")
                + "}]",
            )


def _effect_check(step: Step, recipe: Recipe) -> Check | None:
    """A check that shows the submission's effect: its first non-URL expectation."""
    for check in [*step.expect, *(c for c in recipe.done_when if c.tab == step.tab)]:
        if check.kind not in ("url", "url_regex"):
            return check.model_copy(update={"tab": None})
    return None


def url_only_expectations(recipe: Recipe, context: LintContext) -> Iterator[Finding]:
    for number, step in enumerate(recipe.steps):
        kinds = {check.kind for check in step.expect}
        if step.effect == "submit" and kinds and kinds <= {"url", "url_regex"}:
            probe = _effect_check(step, recipe)
            yield Finding(
                "LINT_URL_ONLY_EXPECT",
                f"steps[{number}].expect",
                f"submit step {step.id!r} checks only the URL: an error page at that URL passes",
                "add " + (flow(probe) if probe else "{visible: {role: status, name: ...}}"),
            )


_FORM_FIELD_KINDS = frozenset({"value", "checked"})


def _verification_after(recipe: Recipe, number: int) -> list[Check]:
    """What verifies submit step ``number``: its ``expect``, the passive checks right after
    it on its tab, and the recipe's ``done_when`` for that tab."""
    step = recipe.steps[number]
    checks = list(step.expect)
    for later in recipe.steps[number + 1 :]:
        if not later.is_passive or later.tab != step.tab:
            break
        if later.verify_field is not None:
            checks.append(Check(value=later.verify_field))
        checks.extend(c for c in (later.verify_outcome, later.wait_for) if c is not None)
    return checks + [c for c in recipe.done_when if c.tab == step.tab]


def form_only_verification(recipe: Recipe, context: LintContext) -> Iterator[Finding]:
    for number, step in enumerate(recipe.steps):
        if step.effect != "submit":
            continue
        checks = _verification_after(recipe, number)
        if checks and {check.kind for check in checks} <= _FORM_FIELD_KINDS:
            yield Finding(
                "LINT_FORM_ONLY_VERIFY",
                f"steps[{number}].expect",
                f"submit step {step.id!r} is verified only by the form's own fields: they hold "
                "what was typed even when the server never stored it",
                "check a page the server produced: {text: {target: {role: region, name: ...}, "
                "contains: ...}} on the detail page, or {visible: {role: link, name: ...}} "
                "in the listing",
            )


def secrets_in_urls(recipe: Recipe, context: LintContext) -> Iterator[Finding]:
    secrets = {name for name, param in recipe.params.items() if param.secret}
    for path, text in iter_texts(recipe):
        used = sorted(secrets & template_names(text)) if _URL_FIELDS.search(path) else []
        for name in used:
            yield Finding(
                "LINT_SECRET_IN_URL",
                path,
                f"secret {name!r} is in a URL: servers, proxies and browser history keep URLs",
                "fill it into a field: fill: {target: {label: ...}, value: "
                + flow("{{ " + name + " }}")
                + "}",
            )


def unused_params(recipe: Recipe, context: LintContext) -> Iterator[Finding]:
    used: set[str] = set()
    for _, text in iter_texts(recipe):
        used |= template_names(text)
    for name in recipe.params:
        if name not in used:
            yield Finding(
                "LINT_UNUSED_PARAM",
                f"params.{name}",
                f"parameter {name!r} is used by no template",
                f"use it as {{{{ {name} }}}}, or remove params.{name}",
            )


def tab_origins(recipe: Recipe, context: LintContext) -> Iterator[Finding]:
    for role, tab in recipe.tabs.items():
        start = origin_of(tab.start or "")
        listed = {origin_of(origin) for origin in tab.origins}
        if start is None or not listed <= {start}:
            continue  # a popup inherits its opener's; listed origins are a choice made
        for path, origin in _tab_urls(recipe, role):
            if origin != start:
                yield Finding(
                    "LINT_TAB_ORIGIN",
                    path,
                    f"tab {role!r} may visit only {start} (its start URL's origin), not {origin}",
                    f"tabs.{role}.origins: {flow([start, origin])}",
                )


def _tab_urls(recipe: Recipe, role: str) -> Iterator[tuple[str, str]]:
    """The absolute URLs a tab role is sent to or expected at, with their origins."""
    for number, step in enumerate(recipe.steps):
        for path, text in iter_texts(step, f"steps[{number}]"):
            in_tab = _check_tab(step, recipe, path) == role
            origin = origin_of(text) if in_tab and _URL_FIELDS.search(path) else None
            if origin is not None:
                yield path, origin


def _check_tab(step: Step, recipe: Recipe, path: str) -> str:
    """The tab a field of a step is about: an expectation may name another tab."""
    match = re.match(r"^steps\[\d+\]\.expect\[(\d+)\]", path)
    return (step.expect[int(match.group(1))].tab or step.tab) if match else step.tab


def large_page_lookups(recipe: Recipe, context: LintContext) -> Iterator[Finding]:
    """Only with recorded page sizes: without them nothing says the page is large."""
    sizes = context.page_sizes or {}
    for number, step in enumerate(recipe.steps):
        target, size = step.action_target, sizes.get(step.tab, 0)
        if target is None or target.role is None or target.within or size < LARGE_PAGE_ELEMENTS:
            continue
        yield Finding(
            "LINT_LARGE_PAGE_LOOKUP",
            f"steps[{number}].{step.kind}.target",
            f"{target.describe()} is looked up among {size} elements of tab {step.tab!r}",
            flow(target.model_dump(exclude_defaults=True, exclude_none=True))[:-1]
            + ", within: {role: form, name: ...}}, or a test_id",
        )


Check_ = Callable[[Recipe, LintContext], Iterator[Finding]]


@dataclass(frozen=True)
class Rule:
    """A rule's codes (one function may give two), what they flag, and whether it runs by
    default (``--select`` turns on one that does not)."""

    codes: Mapping[str, str]
    check: Check_
    default: bool = True


RULES: tuple[Rule, ...] = (
    Rule(
        {
            "LINT_CSS_TARGET": "a target found by CSS, which breaks when the markup changes",
            "LINT_POSITION_TARGET": "a target found by its position (nth-child, first, nth=)",
        },
        css_targets,
    ),
    Rule({"LINT_LOOSE_TARGET": "an action on a target matched by substring"}, loose_targets),
    Rule(
        {"LINT_SUBMIT_WITHOUT_RECONCILE": "a submit step with no reconcile probe"},
        submits_without_reconcile,
        default=False,
    ),
    Rule(
        {"LINT_URL_ONLY_EXPECT": "a submit step whose expectations check only the URL"},
        url_only_expectations,
    ),
    Rule(
        {"LINT_FORM_ONLY_VERIFY": "a submit step verified only by the form's own fields"},
        form_only_verification,
    ),
    Rule({"LINT_SECRET_IN_URL": "a secret parameter in a URL"}, secrets_in_urls),
    Rule({"LINT_UNUSED_PARAM": "a parameter no template uses"}, unused_params),
    Rule({"LINT_TAB_ORIGIN": "a URL outside the only origin a tab role may visit"}, tab_origins),
    Rule(
        {"LINT_LARGE_PAGE_LOOKUP": "a role lookup on a large page with no `within` scope"},
        large_page_lookups,
    ),
)
CODES: dict[str, str] = {code: text for rule in RULES for code, text in rule.codes.items()}
DEFAULT_CODES = frozenset(code for rule in RULES if rule.default for code in rule.codes)
