"""The recipe format: a stored browser procedure, as validated data.

A recipe is data, never code that runs on load. Every model forbids unknown fields, so a
typo (``exepct:``) is an error with a path instead of a silently ignored line. The same
models describe a rendered plan (see ``northstar.plan.compiler``): rendering replaces template
strings and nothing else, so there is one shape to learn.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

__all__ = [
    "ACTION_KINDS",
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


def _scalar_to_text(value: Any) -> Any:
    """Accept numbers where text is meant (``value: 42``); refuse YAML booleans."""
    if isinstance(value, bool):
        raise ValueError('a YAML boolean where text is expected; quote it ("yes")')
    if isinstance(value, int | float):
        return str(value)
    return value


Text = Annotated[str, BeforeValidator(_scalar_to_text)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Target(_Model):
    """One element on the page, found by what a person sees (role and name first).

    Exactly one locator kind is set; CSS is the last resort. ``within`` narrows the search
    to inside another target, ``frame`` to inside an iframe (a CSS selector or the frame's
    ``name``/``title``).

    ``name``, ``label``, ``placeholder`` and ``text`` match the whole name or text, case
    included, unless ``exact: false`` asks for Playwright's looser match (a substring, any
    case): a renamed "Submit" button must not quietly become "Submit feedback".
    """

    role: str | None = None
    name: Text | None = None
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
    placeholder: Text | None = None
    text: Text | None = None
    test_id: Text | None = None
    css: str | None = None
    within: Target | None = None
    frame: str | None = None

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
        for value in (self.name, self.label, self.placeholder, self.text):
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


class ClickAction(TargetAction):
    button: Literal["left", "right", "middle"] = "left"
    count: int = Field(default=1, ge=1, le=3)


class FillAction(_Model):
    target: Target
    value: Text


class SelectAction(_Model):
    """Choose options of a ``<select>`` by value or visible label."""

    target: Target
    value: Text | None = None
    label: Text | None = None
    values: list[Text] | None = None

    @model_validator(mode="after")
    def _one_choice(self) -> SelectAction:
        if sum(x is not None for x in (self.value, self.label, self.values)) != 1:
            raise ValueError("select needs exactly one of value, label, values")
        return self


class PressAction(_Model):
    key: str
    target: Target | None = None


class UploadAction(_Model):
    """Set the files of a file input; each entry is a path or a ``{{ file_param }}``."""

    target: Target
    files: list[Text] = Field(min_length=1)


class TextCheck(_Model):
    target: Target
    equals: Text | None = None
    contains: Text | None = None

    @model_validator(mode="after")
    def _one_comparison(self) -> TextCheck:
        if (self.equals is None) == (self.contains is None):
            raise ValueError("give exactly one of `equals` or `contains`")
        return self


class FieldValueCheck(_Model):
    target: Target
    equals: Text


class CheckedCheck(_Model):
    target: Target
    checked: bool = True


class CountCheck(_Model):
    target: Target
    equals: int = Field(ge=0)


class TitleCheck(_Model):
    equals: Text | None = None
    contains: Text | None = None

    @model_validator(mode="after")
    def _one_comparison(self) -> TitleCheck:
        if (self.equals is None) == (self.contains is None):
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
)


class Check(_Model):
    """One expected result, checked with Playwright's auto-waiting assertions.

    ``tab`` defaults to the step's tab; ``done_when`` checks must name it.
    """

    tab: str | None = None
    url: Text | None = None
    url_regex: str | None = None
    visible: Target | None = None
    hidden: Target | None = None
    text: TextCheck | None = None
    value: FieldValueCheck | None = None
    checked: CheckedCheck | None = None
    count: CountCheck | None = None
    title: TitleCheck | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Check:
        chosen = [k for k in CHECK_KINDS if getattr(self, k) is not None]
        if len(chosen) != 1:
            raise ValueError(
                f"a check needs exactly one of {', '.join(CHECK_KINDS)}"
                + (f" (got {', '.join(chosen)})" if chosen else "")
            )
        return self

    @property
    def kind(self) -> str:
        return next(k for k in CHECK_KINDS if getattr(self, k) is not None)

    def describe(self) -> str:
        """The expectation in words, for error messages and reports."""
        kind = self.kind
        body = getattr(self, kind)
        if isinstance(body, Target):
            return f"{kind} {body.describe()}"
        if isinstance(body, str):
            return f"{kind} {body!r}"
        target = getattr(body, "target", None)
        rest = {k: v for k, v in body.model_dump(exclude_none=True).items() if k != "target"}
        where = f" of {target.describe()}" if isinstance(target, Target) else ""
        return f"{kind}{where} {rest}"


def _check_read_source(source: str, target: Target | None, attribute: str | None) -> None:
    """Reading text, a value or an attribute needs a target; an attribute needs its name."""
    if source in ("text", "attribute", "value") and target is None:
        raise ValueError(f"reading from {source} needs a `target`")
    if source == "attribute" and not attribute:
        raise ValueError("reading from attribute needs `attribute`")


class ExtractAction(_Model):
    """Read a value from the page into the iteration's outputs under ``as``."""

    as_: str = Field(alias="as", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    source: Literal["url", "text", "attribute", "value", "title"] = Field(
        default="text", alias="from"
    )
    target: Target | None = None
    attribute: str | None = None
    regex: str | None = None

    @model_validator(mode="after")
    def _target_when_needed(self) -> ExtractAction:
        _check_read_source(self.source, self.target, self.attribute)
        return self


class ReconcileProbe(_Model):
    """A read-only probe step: navigate, or check something."""

    goto: Text | None = None
    check: Check | None = None


RetryOn = Literal["navigation", "target_missing"]


def _navigation_only() -> list[RetryOn]:
    return ["navigation"]


class RetryPolicy(_Model):
    """Bounded retry of a failed attempt of a step; never of a dispatched submission.

    ``on`` names what counts as a passing trouble: ``navigation`` (a network error or a
    5xx answer to a page load) and ``target_missing`` (a target that is not there yet).
    Without a policy, a step retries navigation failures up to 3 times within 30 s.
    """

    attempts: int = Field(default=3, ge=1, le=10)
    max_seconds: float = Field(default=30, gt=0, le=600)
    on: list[RetryOn] = Field(default_factory=_navigation_only)


class Step(_Model):
    """One step: an id, the tab role it acts on, and exactly one kind."""

    id: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
    tab: str
    description: str = ""
    goto: Text | None = None
    click: ClickAction | None = None
    fill: FillAction | None = None
    select: SelectAction | None = None
    check: TargetAction | None = None
    uncheck: TargetAction | None = None
    press: PressAction | None = None
    upload: UploadAction | None = None
    hover: TargetAction | None = None
    wait_for: Check | None = None
    verify_outcome: Check | None = None
    verify_field: FieldValueCheck | None = None
    extract: ExtractAction | None = None
    effect: Literal["submit"] | None = None
    allow_loose_target: bool = Field(
        default=False,
        description=(
            "true: this submit step may act on a target with `exact: false` (a substring "
            "match). Without it, validate rejects a loose target on a submit step."
        ),
    )
    timeout: int | None = Field(default=None, ge=1, le=600_000, description="milliseconds")
    expect: list[Check] = Field(default_factory=list)
    reconcile: list[ReconcileProbe] = Field(default_factory=list)
    retry: RetryPolicy | None = None
    settle: int | None = Field(
        default=None, ge=0, le=604_800, description="seconds; default 60 (submit steps)"
    )
    after_submit: Text | None = None

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

    type: Literal["string", "integer", "number", "boolean", "enum", "file"] = "string"
    required: bool = False
    default: str | int | float | bool | None = None
    choices: list[Text] | None = None
    secret: bool = False
    description: str = ""

    @model_validator(mode="after")
    def _enum_has_choices(self) -> Param:
        if (self.type == "enum") != (self.choices is not None):
            raise ValueError("`choices` is required for type enum and only allowed there")
        if self.required and self.default is not None:
            raise ValueError("a required parameter has no default; drop one of them")
        return self


class TabRole(_Model):
    """A named tab: opened by the runner at ``start``, or the popup of step ``opened_by``."""

    start: Text | None = None
    opened_by: str | None = None
    origins: list[Text] = Field(default_factory=list)
    description: str = ""

    @model_validator(mode="after")
    def _one_origin(self) -> TabRole:
        if (self.start is None) == (self.opened_by is None):
            raise ValueError("a tab role needs exactly one of `start` or `opened_by`")
        return self


class Output(_Model):
    """A value the iteration produces, read from a tab after the steps ran."""

    tab: str
    source: Literal["url", "text", "attribute", "value", "title"] = Field(alias="from")
    target: Target | None = None
    attribute: str | None = None
    regex: str | None = None

    @model_validator(mode="after")
    def _target_when_needed(self) -> Output:
        _check_read_source(self.source, self.target, self.attribute)
        return self


class Recipe(_Model):
    """A stored procedure: parameters, tab roles, steps, outputs and completion criteria."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    version: int = Field(default=1, ge=1)
    description: str = ""
    timeout: int = Field(default=10_000, ge=1, le=600_000, description="default step ms")
    retry: RetryPolicy | None = None
    params: dict[str, Param] = Field(default_factory=dict)
    tabs: dict[str, TabRole] = Field(min_length=1)
    steps: list[Step] = Field(min_length=1)
    outputs: dict[str, Output] = Field(default_factory=dict)
    done_when: list[Check] = Field(default_factory=list)
