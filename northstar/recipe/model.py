"""The recipe format: a stored browser procedure, as validated data.

A recipe is data, never code that runs on load. Every model forbids unknown fields, so a
typo (``exepct:``) is an error with a path instead of a silently ignored line. The same
models describe a rendered plan (see ``northstar.plan.compiler``): rendering replaces template
strings and nothing else, so there is one shape to learn.

These models are also the editor schema (``northstar schema`` is their JSON Schema): each
rule a validator checks across fields ("exactly one step kind", "`name` goes with `role`")
is written beside it as the schema fragment that says the same (``json_schema_extra``),
from the same constants, and validation is strict (no "2" for 2, no "yes" for true), so
a document the schema accepts is one these models accept, and the other way round
(``tests/recipe/test_schema_agreement.py`` feeds both 4000 documents).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)

__all__ = [
    "ACTION_KINDS",
    "ARIA_ROLES",
    "DEFAULT_SETTLE_S",
    "PASSIVE_KINDS",
    "STEP_KINDS",
    "Check",
    "ClickAction",
    "ExtractAction",
    "FieldValueCheck",
    "FillAction",
    "Output",
    "Param",
    "PressAction",
    "Recipe",
    "ReconcileProbe",
    "RetryPolicy",
    "SelectAction",
    "Step",
    "TabRole",
    "Target",
    "TargetAction",
    "TextCheck",
    "TitleCheck",
    "UploadAction",
]

# How long after a submission its effect may take to show before its absence can be proven.
DEFAULT_SETTLE_S = 60

ACTION_KINDS = ("goto", "click", "fill", "select", "check", "uncheck", "press", "upload", "hover")
PASSIVE_KINDS = ("wait_for", "verify_outcome", "verify_field", "extract")
STEP_KINDS = ACTION_KINDS + PASSIVE_KINDS

TARGET_LOCATORS = ("role", "label", "placeholder", "text", "test_id", "css")
MATCHED_TEXTS = ("name", "label", "placeholder", "text")

# The roles Playwright's get_by_role accepts (its AriaRole type; a test pins the list).
ARIA_ROLES = (
    "alert", "alertdialog", "application", "article", "banner", "blockquote", "button",
    "caption", "cell", "checkbox", "code", "columnheader", "combobox", "complementary",
    "contentinfo", "definition", "deletion", "dialog", "directory", "document", "emphasis",
    "feed", "figure", "form", "generic", "grid", "gridcell", "group", "heading", "img",
    "insertion", "link", "list", "listbox", "listitem", "log", "main", "marquee", "math",
    "menu", "menubar", "menuitem", "menuitemcheckbox", "menuitemradio", "meter",
    "navigation", "none", "note", "option", "paragraph", "presentation", "progressbar",
    "radio", "radiogroup", "region", "row", "rowgroup", "rowheader", "scrollbar", "search",
    "searchbox", "separator", "slider", "spinbutton", "status", "strong", "subscript",
    "superscript", "switch", "tab", "table", "tablist", "tabpanel", "term", "textbox",
    "time", "timer", "toolbar", "tooltip", "tree", "treegrid", "treeitem",
)  # fmt: skip


# --- schema fragments for the rules the validators below check across fields -----------


def _present(*keys: str) -> dict[str, Any]:
    """The fields are there with a value (``null`` counts as absent, as in the models)."""
    return {"required": list(keys), "properties": {key: {"not": {"type": "null"}} for key in keys}}


def _exactly_one(keys: Sequence[str]) -> dict[str, Any]:
    return {"oneOf": [_present(key) for key in keys]}


def _absent(*keys: str) -> dict[str, Any]:
    """None of the fields has a value."""
    return {"properties": {key: {"type": "null"} for key in keys}}


def _when(condition: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    return {"if": condition, "then": then}


def _all(*rules: dict[str, Any]) -> dict[str, Any]:
    return {"allOf": list(rules)}


def _known_role(role: str) -> str:
    if role not in ARIA_ROLES:
        close = difflib.get_close_matches(role, ARIA_ROLES, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else " (see `northstar schema`)"
        raise ValueError(f"unknown ARIA role {role!r}{hint}")
    return role


# An ARIA role: an enum in the schema, the same list checked (with a hint) on load.
AriaRole = Annotated[str, AfterValidator(_known_role), WithJsonSchema({"enum": list(ARIA_ROLES)})]


def _whole_number(value: Any) -> Any:
    """``3.0`` is the integer 3 (as JSON Schema counts it); any other float stays a float."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Whole = Annotated[int, BeforeValidator(_whole_number)]


def _scalar_to_text(value: Any) -> Any:
    """Accept numbers where text is meant (``value: 42``); refuse YAML booleans."""
    if isinstance(value, bool):
        raise ValueError('a YAML boolean where text is expected; quote it ("yes")')
    if isinstance(value, int | float):
        return str(value)
    return value


# The schema says what the loader accepts: text, or a number read as its text.
Text = Annotated[
    str, BeforeValidator(_scalar_to_text), WithJsonSchema({"type": ["string", "number"]})
]


class _Model(BaseModel):
    # Each field's docstring is its description in `northstar schema` (editors show it).
    # Strict: the schema's types are JSON's, so no "2" for 2 or "false" for false; fields
    # are read by their YAML names only (`from`, `as`), as the schema spells them; Python's
    # own regex engine checks patterns, as JSON Schema validators do.
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        strict=True,
        validate_by_name=False,
        validate_by_alias=True,
        use_attribute_docstrings=True,
        regex_engine="python-re",
    )


class Target(_Model):
    """One element on the page, found by what a person sees (role and name first).

    Exactly one locator kind is set; CSS is the last resort. ``within`` narrows the search
    to inside another target, ``frame`` to inside an iframe (a CSS selector or the frame's
    ``name``/``title``).

    ``name``, ``label``, ``placeholder`` and ``text`` match the whole name or text, case
    included, unless ``exact: false`` asks for Playwright's looser match (a substring, any
    case): a renamed "Submit" button must not quietly become "Submit feedback".
    """

    model_config = ConfigDict(
        json_schema_extra=_all(
            _exactly_one(TARGET_LOCATORS),
            _when(_present("name"), _present("role")),
            _when(
                {"required": ["exact"], "properties": {"exact": {"const": False}}},
                {"anyOf": [_present(key) for key in MATCHED_TEXTS]},
            ),
        )
    )

    role: AriaRole | None = None
    """ARIA role of the element (button, link, textbox, heading, ...); pairs with `name`."""
    name: Text | None = None
    """Accessible name of the element with `role` (its label or visible text)."""
    exact: bool = Field(
        default=True,
        description=(
            "true (default): `name`, `label`, `placeholder` or `text` must equal the whole "
            "accessible name or text, case-sensitive (surrounding whitespace ignored). "
            "false: a case-insensitive substring is enough (a submit step also needs "
            "`allow_loose_target: true`)."
        ),
    )
    label: Text | None = None
    """Text of the form field's label (`<label>`, aria-label or aria-labelledby)."""
    placeholder: Text | None = None
    """Placeholder text of an input."""
    text: Text | None = None
    """Visible text of the element."""
    test_id: Text | None = None
    """Value of the element's `data-testid` attribute."""
    css: str | None = None
    """A CSS selector: the last resort, it breaks when the markup changes."""
    within: Target | None = None
    """Another target this one is searched inside (narrows a repeated name)."""
    frame: str | None = None
    """The iframe the target is in: a CSS selector, or the frame's `name` or `title`."""

    @model_validator(mode="after")
    def _one_locator(self) -> Target:
        chosen = [k for k in TARGET_LOCATORS if getattr(self, k) is not None]
        if len(chosen) != 1:
            raise ValueError(
                "a target needs exactly one of role, label, placeholder, text, test_id, css"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        if self.name is not None and self.role is None:
            raise ValueError("`name` only goes with `role`")
        if not self.exact and self.matched_text is None:
            raise ValueError(
                "`exact: false` loosens only a `name`, `label`, `placeholder` or `text`; "
                "this target has none"
            )
        return self

    @property
    def matched_text(self) -> str | None:
        """The name or text this target compares with the page (``exact`` applies to it)."""
        for key in MATCHED_TEXTS:
            value: str | None = getattr(self, key)
            if value is not None:
                return value
        return None

    @property
    def is_loose(self) -> bool:
        """Whether this target, or a scope it sits ``within``, matches by substring."""
        loose_here = not self.exact and self.matched_text is not None
        return loose_here or (self.within is not None and self.within.is_loose)

    def describe(self) -> str:
        """What was looked for, in words a person recognises (no values typed into it)."""
        if self.role is not None:
            text = f"{self.role}" + (f' "{self.name}"' if self.name is not None else "")
        else:
            kind = next(k for k in TARGET_LOCATORS if getattr(self, k) is not None)
            text = f'{kind} "{getattr(self, kind)}"'
        if not self.exact:
            text += " (substring, any case)"
        if self.within is not None:
            text += f" within {self.within.describe()}"
        if self.frame is not None:
            text += f" in frame {self.frame!r}"
        return text


class TargetAction(_Model):
    """An action that needs only its target: click, check, uncheck, hover."""

    target: Target
    """The element acted on."""


class ClickAction(TargetAction):
    """A click on the target (which mouse button, how many times)."""

    button: Literal["left", "right", "middle"] = "left"
    """Mouse button to click with."""
    count: Whole = Field(default=1, ge=1, le=3)
    """Clicks in a row (2 is a double click)."""


class FillAction(_Model):
    """Type a value into a text field or a rich editor, replacing what it held.

    On a rich editor (a ``contenteditable``: Draft.js, ProseMirror, Quill, Lexical, TinyMCE)
    the fill ends only when the editor shows the text after it settled; where a plain fill
    does not take, the text is typed key by key, and if it still is not there the step fails
    with ``FILL_NOT_APPLIED``.
    """

    model_config = ConfigDict(
        json_schema_extra={"dependentSchemas": {"delay": {"properties": {"type": {"const": True}}}}}
    )

    target: Target
    """The field typed into (its old value is replaced)."""
    value: Text
    """The text to type; templates such as `{{ title }}` are rendered first."""
    type: bool = False
    """true: press a key for each character (real keystrokes) instead of inserting the text."""
    delay: Whole = Field(default=0, ge=0, le=1000)
    """Milliseconds between keystrokes (with `type: true`), for widgets that need time."""

    @model_validator(mode="after")
    def _delay_needs_type(self) -> FillAction:
        if self.delay and not self.type:
            raise ValueError("`delay` is the time between keystrokes: it needs `type: true`")
        return self


SELECT_CHOICES = ("value", "label", "values")


class SelectAction(_Model):
    """Choose options of a ``<select>`` by value or visible label."""

    model_config = ConfigDict(json_schema_extra=_exactly_one(SELECT_CHOICES))

    target: Target
    """The `<select>` element."""
    value: Text | None = None
    """The option's `value` attribute."""
    label: Text | None = None
    """The option's visible label."""
    values: list[Text] | None = None
    """Several options (a multiple select), by value."""

    @model_validator(mode="after")
    def _one_choice(self) -> SelectAction:
        if sum(getattr(self, key) is not None for key in SELECT_CHOICES) != 1:
            raise ValueError("select needs exactly one of value, label, values")
        return self


class PressAction(_Model):
    """Press a key, on a target or on the page."""

    key: str
    """A key or chord in Playwright's names: `Enter`, `Control+A`, `ArrowDown`."""
    target: Target | None = None
    """The element focused before the key is pressed; without it, the page."""


class UploadAction(_Model):
    """Set the files of a file input; each entry is a path or a ``{{ file_param }}``."""

    target: Target
    """The file input (`<input type=file>`)."""
    files: list[Text] = Field(min_length=1)
    """Paths, relative to the recipe's folder, or `{{ file_param }}` templates."""


COMPARISONS = ("equals", "contains")


class TextCheck(_Model):
    """An element's text equals or contains a value."""

    model_config = ConfigDict(json_schema_extra=_exactly_one(COMPARISONS))

    target: Target
    """The element whose text is compared."""
    equals: Text | None = None
    """The whole text, exactly (surrounding whitespace ignored)."""
    contains: Text | None = None
    """A part of the text."""

    @model_validator(mode="after")
    def _one_comparison(self) -> TextCheck:
        if sum(getattr(self, key) is not None for key in COMPARISONS) != 1:
            raise ValueError("give exactly one of `equals` or `contains`")
        return self


class FieldValueCheck(_Model):
    """A form field holds exactly this value."""

    target: Target
    """The form field whose current value is compared."""
    equals: Text
    """The value the field must hold."""


class CheckedCheck(_Model):
    """A checkbox or radio button is checked (or not)."""

    target: Target
    """The checkbox or radio button."""
    checked: bool = True
    """true: it must be checked; false: unchecked."""


class CountCheck(_Model):
    """A target matches exactly this many elements."""

    target: Target
    """What is counted (every element it matches)."""
    equals: Whole = Field(ge=0)
    """How many elements must match."""


class TitleCheck(_Model):
    """The page title equals or contains a value."""

    model_config = ConfigDict(json_schema_extra=_exactly_one(COMPARISONS))

    equals: Text | None = None
    """The whole page title."""
    contains: Text | None = None
    """A part of the page title."""

    @model_validator(mode="after")
    def _one_comparison(self) -> TitleCheck:
        if sum(getattr(self, key) is not None for key in COMPARISONS) != 1:
            raise ValueError("give exactly one of `equals` or `contains`")
        return self


CHECK_KINDS = (
    "url",
    "url_regex",
    "visible",
    "hidden",
    "text",
    "value",
    "checked",
    "count",
    "title",
    "idle",
    "any_of",
)
# Bounds of an idle check's quiet time, in milliseconds.
IDLE_MS = (50, 60_000)


class Check(_Model):
    """One expected result, checked with Playwright's auto-waiting assertions.

    ``tab`` defaults to the step's tab; ``done_when`` checks must name it.
    """

    model_config = ConfigDict(json_schema_extra=_exactly_one(CHECK_KINDS))

    tab: str | None = None
    """The tab role checked; default the step's tab (`done_when` checks must name it)."""
    url: Text | None = None
    """The page URL matches this glob (`**/posts?created=*`)."""
    url_regex: str | None = None
    """The page URL matches this regular expression (searched, not anchored)."""
    visible: Target | None = None
    """This target is visible."""
    hidden: Target | None = None
    """This target is hidden or absent."""
    text: TextCheck | None = None
    """An element's text equals or contains a value."""
    value: FieldValueCheck | None = None
    """A form field holds a value."""
    checked: CheckedCheck | None = None
    """A checkbox or radio button is (un)checked."""
    count: CountCheck | None = None
    """A target matches this many elements."""
    title: TitleCheck | None = None
    """The page title equals or contains a value."""
    idle: Whole | None = Field(default=None, ge=IDLE_MS[0], le=IDLE_MS[1])
    """The page had no request pending for this many milliseconds (a save the page makes
    by itself has finished); waited for up to the step's timeout."""
    any_of: list[Check] | None = Field(default=None, min_length=2)
    """At least one of these checks holds (they are waited for together, on this check's
    tab): for a page that answers with one of several messages."""

    @model_validator(mode="after")
    def _one_kind(self) -> Check:
        chosen = [k for k in CHECK_KINDS if getattr(self, k) is not None]
        if len(chosen) != 1:
            raise ValueError(
                f"a check needs exactly one of {', '.join(CHECK_KINDS)}"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        if self.any_of and any(each.tab is not None for each in self.any_of):
            raise ValueError("the checks of `any_of` take the tab of the `any_of` check itself")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in CHECK_KINDS if getattr(self, k) is not None)

    def describe(self) -> str:
        """The expectation in words, for error messages and reports."""
        kind = self.kind
        body = getattr(self, kind)
        if self.any_of is not None:
            return "any of (" + " | ".join(each.describe() for each in self.any_of) + ")"
        if self.idle is not None:
            return f"idle: no request pending for {self.idle} ms"
        if isinstance(body, Target):
            return f"{kind} {body.describe()}"
        if isinstance(body, str):
            return f"{kind} {body!r}"
        target = getattr(body, "target", None)
        rest = {k: v for k, v in body.model_dump(exclude_none=True).items() if k != "target"}
        where = f" of {target.describe()}" if isinstance(target, Target) else ""
        return f"{kind}{where} {rest}"


READS_AN_ELEMENT = ("text", "attribute", "value")


def _read_source_rules() -> dict[str, Any]:
    """``_check_read_source`` as schema; an absent `from` is text (an extract's default)."""
    return _all(
        _when({"properties": {"from": {"enum": list(READS_AN_ELEMENT)}}}, _present("target")),
        _when(
            {"required": ["from"], "properties": {"from": {"const": "attribute"}}},
            {"required": ["attribute"], "properties": {"attribute": {"minLength": 1}}},
        ),
    )


def _check_read_source(source: str, target: Target | None, attribute: str | None) -> None:
    """Reading text, a value or an attribute needs a target; an attribute needs its name."""
    if source in READS_AN_ELEMENT and target is None:
        raise ValueError(f"reading from {source} needs a `target`")
    if source == "attribute" and not attribute:
        raise ValueError("reading from attribute needs `attribute`")


class ExtractAction(_Model):
    """Read a value from the page into the iteration's outputs under ``as``."""

    model_config = ConfigDict(json_schema_extra=_read_source_rules())

    as_: str = Field(alias="as", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """Name of the output the value is saved under."""
    source: Literal["url", "text", "attribute", "value", "title"] = Field(
        default="text", alias="from"
    )
    """What is read: the URL, an element's text, attribute or value, or the title."""
    target: Target | None = None
    """The element read (for text, attribute and value)."""
    attribute: str | None = None
    """The attribute read when `from: attribute`."""
    regex: str | None = None
    """A regular expression applied to what was read; its first group is kept."""

    @model_validator(mode="after")
    def _target_when_needed(self) -> ExtractAction:
        _check_read_source(self.source, self.target, self.attribute)
        return self


PROBE_KINDS = ("goto", "check", "page")


class ReconcileProbe(_Model):
    """A read-only probe step: navigate, check that it is the right page, or look for the
    effect."""

    model_config = ConfigDict(json_schema_extra=_exactly_one(PROBE_KINDS))

    goto: Text | None = None
    """Navigate (read-only) to this URL or path; landing anywhere else is inconclusive."""
    check: Check | None = None
    """Look for the submission's effect; found means it happened."""
    page: Check | None = None
    """Check that this is the page the probe meant (a heading, a listing's title): when it
    does not hold, the probe is inconclusive and proves nothing."""

    @model_validator(mode="after")
    def _one_kind(self) -> ReconcileProbe:
        if sum(getattr(self, kind) is not None for kind in PROBE_KINDS) != 1:
            raise ValueError(f"a reconcile probe needs exactly one of: {', '.join(PROBE_KINDS)}")
        return self


RetryOn = Literal["navigation", "target_missing"]


def _navigation_only() -> list[RetryOn]:
    return ["navigation"]


class RetryPolicy(_Model):
    """Bounded retry of a failed attempt of a step; never of a dispatched submission.

    ``on`` names what counts as a passing trouble: ``navigation`` (a network error or a
    5xx answer to a page load) and ``target_missing`` (a target that is not there yet).
    Without a policy, a step retries navigation failures up to 3 times within 30 s.
    """

    attempts: Whole = Field(default=3, ge=1, le=10)
    """Attempts in all, the first one included."""
    max_seconds: float = Field(default=30, gt=0, le=600)
    """Time limit for all attempts together."""
    on: list[RetryOn] = Field(default_factory=_navigation_only)
    """Which failures are retried: `navigation`, `target_missing`."""


class Step(_Model):
    """One step: an id, the tab role it acts on, and exactly one kind."""

    model_config = ConfigDict(
        json_schema_extra=_all(
            _exactly_one(STEP_KINDS),
            {  # an empty after_submit is no URL, so it is allowed (it is falsy in the model)
                "if": {"required": ["effect"], "properties": {"effect": {"const": "submit"}}},
                "else": {
                    "properties": {
                        "settle": {"type": "null"},
                        "after_submit": {"anyOf": [{"type": "null"}, {"const": ""}]},
                    }
                },
            },
        )
    )

    id: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
    """Unique name of the step (letters, digits, `_`, `.`, `-`)."""
    tab: str
    """The tab role the step acts on."""
    description: str = ""
    """What the step means, for people and reports."""
    goto: Text | None = None
    """Navigate to this URL or path (relative to the tab's current origin)."""
    click: ClickAction | None = None
    """Click an element."""
    fill: FillAction | None = None
    """Type text into a field."""
    select: SelectAction | None = None
    """Choose options of a `<select>`."""
    check: TargetAction | None = None
    """Check a checkbox or radio button."""
    uncheck: TargetAction | None = None
    """Uncheck a checkbox."""
    press: PressAction | None = None
    """Press a key."""
    upload: UploadAction | None = None
    """Set the files of a file input."""
    hover: TargetAction | None = None
    """Move the mouse over an element."""
    wait_for: Check | None = None
    """Wait (auto-waiting, up to the timeout) until a check holds; changes nothing."""
    verify_outcome: Check | None = None
    """Check something on the page; changes nothing."""
    verify_field: FieldValueCheck | None = None
    """Check a form field's value; changes nothing."""
    extract: ExtractAction | None = None
    """Read a value from the page into the iteration's outputs."""
    effect: Literal["submit"] | None = None
    """`submit`: the step creates something (a mutation); it is dispatched at most once."""
    allow_loose_target: bool = Field(
        default=False,
        description=(
            "true: this submit step may act on a target with `exact: false` (a substring "
            "match). Without it, validate rejects a loose target on a submit step."
        ),
    )
    timeout: Whole | None = Field(
        default=None,
        ge=1,
        le=600_000,
        description="Time limit of this step in milliseconds; default the recipe's `timeout`.",
    )
    expect: list[Check] = Field(default_factory=list)
    """Checks that must hold after the step; all of them, each auto-waiting."""
    reconcile: list[ReconcileProbe] = Field(default_factory=list)
    """Read-only probes that find out whether an unknown submission happened."""
    retry: RetryPolicy | None = None
    """Bounded retry of this step's failed attempts (never a dispatched submission)."""
    settle: Whole | None = Field(
        default=None,
        ge=0,
        le=604_800,
        description=(
            "Seconds after a submission before a probe that does not find its effect "
            "proves it did not happen; default 60 (submit steps only)."
        ),
    )
    after_submit: Text | None = None
    """URL a resume continues from when this submission is verified."""

    @model_validator(mode="after")
    def _one_kind(self) -> Step:
        chosen = [k for k in STEP_KINDS if getattr(self, k) is not None]
        if len(chosen) != 1:
            raise ValueError(
                f"a step needs exactly one kind: {', '.join(STEP_KINDS)}"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        if self.effect != "submit" and (self.settle is not None or self.after_submit):
            raise ValueError("`settle` and `after_submit` only go with `effect: submit`")
        return self

    @property
    def settle_s(self) -> int:
        """Seconds after dispatch before a probe that does not find the effect proves absence."""
        return DEFAULT_SETTLE_S if self.settle is None else self.settle

    @property
    def kind(self) -> str:
        return next(k for k in STEP_KINDS if getattr(self, k) is not None)

    @property
    def is_passive(self) -> bool:
        return self.kind in PASSIVE_KINDS

    @property
    def action_target(self) -> Target | None:
        """The element an action acts on; ``None`` for ``goto``, a bare ``press``, passive steps."""
        if self.is_passive:
            return None
        target = getattr(getattr(self, self.kind), "target", None)
        return target if isinstance(target, Target) else None


class Param(_Model):
    """A typed parameter; ``secret`` values are never logged, journaled or shown."""

    model_config = ConfigDict(
        json_schema_extra=_all(
            {
                "if": {"required": ["type"], "properties": {"type": {"const": "enum"}}},
                "then": _present("choices"),
                "else": _absent("choices"),
            },
            {
                "not": {"required": ["required"], "properties": {"required": {"const": True}}}
                | {"allOf": [_present("default")]}
            },
        )
    )

    type: Literal["string", "integer", "number", "boolean", "enum", "file"] = "string"
    """The value's type; `file` is a path, fingerprinted at run start."""
    required: bool = False
    """true: the run refuses to start without a value."""
    default: str | int | float | bool | None = None
    """The value used when none is given."""
    choices: list[Text] | None = None
    """The allowed values of an `enum` parameter."""
    secret: bool = False
    """true: the value is never logged, journaled or shown."""
    description: str = ""
    """What the parameter means, for people and agents."""

    @model_validator(mode="after")
    def _enum_has_choices(self) -> Param:
        if (self.type == "enum") != (self.choices is not None):
            raise ValueError("`choices` is required for type enum and only allowed there")
        if self.required and self.default is not None:
            raise ValueError("a required parameter has no default; drop one of them")
        return self


TAB_ORIGINS = ("start", "opened_by")


class TabRole(_Model):
    """A named tab: opened by the runner at ``start``, or the popup of step ``opened_by``."""

    model_config = ConfigDict(json_schema_extra=_exactly_one(TAB_ORIGINS))

    start: Text | None = None
    """URL the runner opens this tab at."""
    opened_by: str | None = None
    """Id of the step whose click opens this tab as a popup."""
    origins: list[Text] = Field(default_factory=list)
    """Origins (scheme, host, port) the tab may visit; default its start URL's."""
    description: str = ""
    """What the tab is for."""

    @model_validator(mode="after")
    def _one_origin(self) -> TabRole:
        if sum(getattr(self, key) is not None for key in TAB_ORIGINS) != 1:
            raise ValueError("a tab role needs exactly one of `start` or `opened_by`")
        return self


class Output(_Model):
    """A value the iteration produces, read from a tab after the steps ran."""

    model_config = ConfigDict(json_schema_extra=_read_source_rules())

    tab: str
    """The tab role read from."""
    source: Literal["url", "text", "attribute", "value", "title"] = Field(alias="from")
    """What is read: the URL, an element's text, attribute or value, or the title."""
    target: Target | None = None
    """The element read (for text, attribute and value)."""
    attribute: str | None = None
    """The attribute read when `from: attribute`."""
    regex: str | None = None
    """A regular expression applied to what was read; its first group is kept."""

    @model_validator(mode="after")
    def _target_when_needed(self) -> Output:
        _check_read_source(self.source, self.target, self.attribute)
        return self


class Recipe(_Model):
    """A stored procedure: parameters, tab roles, steps, outputs and completion criteria."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    """The recipe's name (lower case letters, digits, `_`, `.`, `-`)."""
    version: Whole = Field(default=1, ge=1)
    """The recipe's version; raise it when its meaning changes."""
    description: str = ""
    """What the procedure does."""
    timeout: Whole = Field(
        default=10_000, ge=1, le=600_000, description="Default time limit of a step (ms)."
    )
    retry: RetryPolicy | None = None
    """Default retry policy of every step."""
    params: dict[str, Param] = Field(default_factory=dict)
    """Typed parameters, used in templates as `{{ name }}`."""
    tabs: dict[str, TabRole] = Field(min_length=1)
    """Named tab roles; steps address roles, never "the active tab"."""
    steps: list[Step] = Field(min_length=1)
    """The steps, in order."""
    outputs: dict[str, Output] = Field(default_factory=dict)
    """Values each iteration produces, read after the steps ran."""
    done_when: list[Check] = Field(default_factory=list)
    """Checks that prove the iteration's work is done (each names its `tab`)."""
    setup: list[Step] = Field(default_factory=list)
    """Steps run once per run and lane before the first iteration, in their own browser
    context (typically: sign in); the state they leave seeds every iteration's context."""
    signed_in: list[Check] = Field(default_factory=list)
    """Checks that prove the signed-in state still holds (each names its `tab`, checked on
    that tab's start page) before each iteration; if one fails, `setup` runs again once."""
