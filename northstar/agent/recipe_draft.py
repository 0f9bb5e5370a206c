"""From what an agent did to a recipe: its executed actions turned into a recipe document.

Pure decisions over plain data; ``SessionCore`` collects the history and ``AgentHost``
writes the file. What becomes of a session:

- **Steps**: only actions that were executed and succeeded, once each (a submission
  answered again with ``dispatched: false`` is not a new step). Observations are not steps.
- **Targets**: role and exact name of the element as the observation showed it at the time
  of the action, never a reference; narrowed ``within`` the nearest named ancestor when the
  page had several alike. Without a name: the placeholder; then the agent's own target
  (label, placeholder, test id, text). CSS only when nothing else is known, flagged with a
  YAML comment.
- **Parameters**: a typed (``fill``) or chosen (``select``) value becomes a parameter named
  after the field's label (made plain), with the value as its default. A field the
  observation marks sensitive (a password field) becomes a ``secret`` parameter with no
  default: its value is never held here, so it cannot be written.
- **Expectations**: what the action visibly caused. A new URL gives a ``url`` glob of its
  stable part (any origin, the path, query values as ``*``); a heading or status that
  appeared or changed gives a ``visible`` check. A ``check`` the agent made that held,
  right after an action (before the next one), is kept as an expectation of that action.
  A typed value inside an expectation is replaced by its parameter, so a run with fresh
  values expects the fresh text.
- **Submissions** (``submit=True``) are ``effect: submit`` steps; one with nothing to
  expect gets a ``TODO`` comment and the draft is refused (``RecipeInvalid`` naming it).
- **Tabs**: each role's ``start`` and ``origins``; the first role's origin is the site,
  written ``{{ base_url }}`` so the recipe runs with ``--base-url``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from northstar.agent.actions import ActRequest
from northstar.errors import RecipeInvalid, UsageInvalid
from northstar.monitor.observation import NAMED_BY_CONTENT, Node, Observation, content_text
from northstar.monitor.screen_change import ScreenChange, ScreenChangeSettings, screen_change
from northstar.plan.model import BoundTab
from northstar.recipe.model import Check, Target

__all__ = [
    "DraftedRecipe",
    "ElementSeen",
    "ExecutedAction",
    "HeldCheck",
    "content_name",
    "draft_recipe",
    "element_seen",
    "node_for_target",
    "plain_recipe_name",
    "record_action",
    "visible_after",
    "with_tabs",
]

_PLAIN_RECIPE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_LABEL = re.compile(r'^(?P<role>\S+) "(?P<name>(?:[^"\\]|\\.)*)"$')
_BUILT_INS = frozenset({"base_url", "iteration"})
_VISIBLE_ROLES = ("heading", "status", "alert")
_FIELD_ROLES = ("combobox", "listbox")
# Roles whose accessible name comes from their content when nothing else names them.
_URL_KEYS = frozenset({"url", "url_regex", "goto"})
_MAX_VISIBLE = 2  # expectations per step drawn from the screen change
_MIN_LIFTED = 3  # shorter typed values are not replaced inside expectations
_CSS_NOTE = "# target by CSS: the observation named no role, name, label or placeholder; review"
_ACTED_ON = re.compile(
    r'^(?P<role>[a-z]+)(?: "(?P<name>.*)")? <(?P<tag>[a-z0-9-]+)(?: type=(?P<type>[a-z-]+))?>'
)
_WHOLE_CHANGE = ScreenChangeSettings(max_items=10_000)
_AMBIGUOUS_NOTE = "# TODO: several elements on the page matched this target; narrow it"
_MAX_ALIKE = 5


@dataclass(frozen=True, slots=True)
class ElementSeen:
    """The acted-on element as the observation showed it at the time of the action."""

    role: str
    name: str
    placeholder: str | None = None
    sensitive: bool = False
    unique: bool = True  # no other element of the page had this role and name
    within: tuple[str, str] | None = None  # a unique named ancestor, when not unique
    alike: tuple[str, ...] = ()  # where the elements alike are, when not made unique


@dataclass(frozen=True, slots=True)
class ExecutedAction:
    """One action that was performed and succeeded, with what it visibly caused."""

    tab: str
    action: str
    target: Target | None  # the agent's own target; None when it acted by reference
    element: ElementSeen | None
    value: str | tuple[str, ...] | None  # None for a sensitive field: never held
    submit: bool
    url_before: str
    url_after: str
    appeared: tuple[dict[str, Any], ...] = ()  # checks from the screen change
    opened: tuple[str, ...] = ()  # popups it opened: tab roles with ``opened_by`` this step
    # Its own tab closed itself (a popup's save): ``appeared`` is then its opener's change.
    closed_own: bool = False


@dataclass(frozen=True, slots=True)
class HeldCheck:
    """A check the agent made that held; it may become the previous action's expectation."""

    tab: str
    check: Check


@dataclass(frozen=True, slots=True)
class DraftedRecipe:
    """The recipe document: YAML text and the parameters it declares."""

    name: str
    text: str
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # why each parameter is one
    # Steps whose target matches several elements, with where each is (never an index).
    not_unique: dict[str, list[str]] = field(default_factory=dict)


def plain_recipe_name(name: str) -> str:
    """``name`` if it is plain (lower-case letters, digits, ``-``, ``_``), else refused."""
    if not isinstance(name, str) or not _PLAIN_RECIPE.fullmatch(name):
        raise UsageInvalid(
            f"recipe name {name!r} is not plain",
            fix="Use 1 to 64 lower-case letters, digits, '-' or '_', starting with a letter "
            "or digit (it becomes recipes/NAME.yaml).",
        )
    return name


# Reading the observation (pure)


def _parse_label(label: str) -> tuple[str, str] | None:
    found = _LABEL.fullmatch(label)
    if found is None:
        return None
    return found["role"], found["name"].replace('\\"', '"').replace("\\\\", "\\")


def _count(observation: Observation, role: str, name: str) -> int:
    return sum(1 for n in observation.nodes if n.role == role and n.name == name)


def content_name(observation: Observation, node: Node) -> str:
    """The text of ``node``'s descendants: the accessible name of a button or link named by
    a child element (``<button><svg/><em>Publish</em></button>``), which the page's snapshot
    leaves off the node itself. Empty for other roles, or a node that has its name."""
    if node.name or node.role not in NAMED_BY_CONTENT or node not in observation.nodes:
        return ""
    return content_text(observation.nodes, observation.nodes.index(node))


def _content_named(nodes: Sequence[Node]) -> tuple[Node, ...]:
    """Every node, each nameless button or link named by its content."""
    return tuple(
        replace(n, name=content_text(nodes, i) or n.name)
        if not n.name and n.role in NAMED_BY_CONTENT
        else n
        for i, n in enumerate(nodes)
    )


def element_seen(observation: Observation, node: Node) -> ElementSeen:
    """The element's role, name and scope in ``observation``, for a target that lasts."""
    named = content_name(observation, node)
    if named:  # counted as the page names it, so two "Publish" buttons stay ambiguous
        node = replace(node, name=named)
        observation = observation.model_copy(update={"nodes": _content_named(observation.nodes)})
    unique = bool(node.name) and _count(observation, node.role, node.name) == 1
    within = None
    if node.name and not unique:
        for label in reversed(node.path[:-1]):
            parsed = _parse_label(label)
            if parsed is not None and _count(observation, *parsed) == 1:
                within = parsed
                break
    alike = () if unique or within is not None else _alike(observation, node)
    return ElementSeen(
        node.role,
        node.name,
        node.placeholder,
        node.sensitive,
        unique or not node.name,
        within,
        alike,
    )


def _alike(observation: Observation, node: Node) -> tuple[str, ...]:
    """Where each element with the node's role and name is (its ancestors' labels), for a
    target that could not be made unique: the candidates the save answer names."""
    return tuple(
        " > ".join(n.path) for n in observation.nodes if n.role == node.role and n.name == node.name
    )[:_MAX_ALIKE]


def node_for_target(observation: Observation | None, target: Target | None) -> Node | None:
    """The one node of ``observation`` an agent's exact ``target`` describes, if any."""
    if observation is None or target is None or not target.exact or target.within is not None:
        return None
    found = [n for n in observation.nodes if _describes(target, n)]
    return found[0] if len(found) == 1 else None


def _describes(target: Target, node: Node) -> bool:
    if target.role is not None:
        return node.role == target.role and (target.name is None or node.name == target.name)
    if target.label is not None:
        return bool(node.ref) and node.name == target.label
    if target.placeholder is not None:
        return node.placeholder == target.placeholder
    if target.text is not None:
        return node.name == target.text or node.value == target.text
    return False


def visible_after(change: ScreenChange) -> tuple[dict[str, Any], ...]:
    """``visible`` checks for the headings and statuses the action made appear or change."""
    checks: list[dict[str, Any]] = []
    for item in (*change.added, *change.changed):
        if item.role not in _VISIBLE_ROLES or len(checks) >= _MAX_VISIBLE:
            continue
        text = (item.after.value if item.after is not None else None) or ""
        if item.name:
            checks.append({"visible": {"role": item.role, "name": item.name}})
        elif text.strip():
            checks.append({"visible": {"text": text.strip()}})
    return tuple(checks)


def _seen_by_adapter(acted_on: str) -> tuple[ElementSeen | None, bool]:
    """The element the adapter resolved (``textbox "Password" <input type=password>``)."""
    found = _ACTED_ON.match(acted_on)
    if found is None:
        return None, False
    password = found["type"] == "password"
    return ElementSeen(found["role"], found["name"] or "", sensitive=password), password


def record_action(
    request: ActRequest,
    node: Node | None,
    before: Observation | None,
    after: Observation | None,
    acted_on: str = "",
) -> ExecutedAction:
    """What a successful action did, for ``draft_recipe``; a sensitive value is dropped here."""
    node = node or node_for_target(before, request.target)
    seen = element_seen(before, node) if node is not None and before is not None else None
    by_adapter, password = _seen_by_adapter(acted_on)
    if seen is None and request.target is not None and request.target.css is not None:
        seen = by_adapter  # a role and name the page gave, rather than CSS
    sensitive = password or (seen is not None and seen.sensitive)
    if seen is not None and sensitive and not seen.sensitive:
        seen = replace(seen, sensitive=True)
    if seen is None and sensitive:
        seen = by_adapter
    change = screen_change(before, after, _WHOLE_CHANGE) if before and after else None
    return ExecutedAction(
        tab=request.tab,
        action=request.action,
        target=request.target,
        element=seen,
        value=None if sensitive else request.value,
        submit=request.submit,
        url_before=before.url if before is not None else "",
        url_after=after.url if after is not None else "",
        appeared=visible_after(change) if change is not None else (),
    )


def with_tabs(
    action: ExecutedAction,
    opened: Sequence[str],
    closed: Sequence[str],
    opener_before: Observation | None,
    opener_after: Observation | None,
) -> ExecutedAction:
    """``action`` with the tabs it opened, and, when it closed its own tab, the change it
    caused on the opener (Django's popup puts its new option in the opener's form)."""
    closed_own = action.tab in closed
    appeared = action.appeared
    if closed_own and opener_before is not None and opener_after is not None:
        change = screen_change(opener_before, opener_after, _WHOLE_CHANGE)
        appeared = tuple({**check, "tab": opener_after.tab} for check in opener_change(change))
    return replace(action, opened=tuple(opened), closed_own=closed_own, appeared=appeared)


def opener_change(change: ScreenChange) -> tuple[dict[str, Any], ...]:
    """Checks for what a closing popup changed on its opener: an option it added to a
    select (the select's text then holds it; an option itself is never "visible"), or a
    heading or status that appeared."""
    checks = list(visible_after(change))
    for item in change.added:
        field_label = _field_of(item.path) if item.role == "option" and item.name else None
        if field_label is not None:
            target = {"role": field_label[0], "name": field_label[1]}
            checks.append({"text": {"target": target, "contains": item.name}})
    return tuple(checks[:_MAX_VISIBLE])


def _field_of(path: Sequence[str]) -> tuple[str, str] | None:
    """The named select (combobox or listbox) an option's path runs through."""
    for label in reversed(path[:-1]):
        parsed = _parse_label(label)
        if parsed is not None and parsed[0] in _FIELD_ROLES:
            return parsed
    return None


# URLs


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _site_url(url: str, site: str) -> str:
    """``url`` with the site's origin written as ``{{ base_url }}``."""
    if _origin(url) != site:
        return url
    parts = urlsplit(url)
    rest = parts.path or "/"
    return "{{ base_url }}" + rest + (f"?{parts.query}" if parts.query else "")


def url_glob(url: str) -> str:
    """The stable part of ``url`` as a glob: any origin, its path, query values as ``*``."""
    parts = urlsplit(url)
    path = "/".join("*" if s.isdigit() else s for s in (parts.path or "/").split("/"))
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = "&".join(f"{key}=*" for key, _ in pairs)
    return "**" + path + (f"?{query}" if query else "")


# Drafting


@dataclass
class _Drafting:
    """The recipe under construction: parameters, steps and the notes on each step."""

    site: str
    renames: Mapping[str, str]
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (typed value, its parameter)
    lifted: list[tuple[str, str]] = field(default_factory=list)
    # Each parameter and why it is one (the save answer lists them).
    reasons: dict[str, str] = field(default_factory=dict)
    opened_by: dict[str, str] = field(default_factory=dict)  # popup role -> its step id
    submitted: set[str] = field(default_factory=set)  # parameters a later submission sends
    echoed: set[str] = field(default_factory=set)  # parameters a submission's result shows
    # Steps whose target could not be made unique: where the elements alike are.
    not_unique: dict[str, list[str]] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    notes: list[list[str]] = field(default_factory=list)
    step_ids: set[str] = field(default_factory=set)
    proposed: set[str] = field(default_factory=set)

    def param(self, label: str, value: str | None, *, secret: bool, submitted: bool = False) -> str:
        """A parameter for a typed or chosen value; the template that stands for it."""
        proposed = _unique(_plain(label), self.proposed)
        self.proposed.add(proposed)
        name = self.renames.get(proposed, proposed)
        if name in self.params or name in _BUILT_INS:
            name = _unique(name, set(self.params) | _BUILT_INS)
        template = "{{ " + name + " }}"
        if secret or value is None:
            self.params[name] = {"type": "string", "secret": True, "required": True}
            self.reasons[name] = f"typed into the sensitive field {label!r}: required, not saved"
            return template
        self.params[name] = {"type": "string", "default": value}
        self.reasons[name] = f"typed or chosen in {label!r}"
        if submitted:
            self.submitted.add(name)
        self.lifted.append((value, name))
        return template

    def make_unique(self) -> None:
        """A submitted value the page showed back after a submission names the record
        (a title): each iteration appends its number, so ``--repeat 3`` does not send
        three identical records by accident. Other values keep their default."""
        for name in sorted(self.submitted & self.echoed):
            self.steps = _with_iteration(self.steps, "{{ " + name + " }}")
            self.reasons[name] += ", submitted and shown back: each iteration appends its number"

    def step_id(self, action: ExecutedAction) -> str:
        label = action.element.name if action.element is not None else ""
        if not label and action.target is not None:
            label = action.target.matched_text or ""
        base = _plain(f"{action.action} {label}".strip()).replace("_", "-")
        chosen = _unique(base, self.step_ids, sep="-")
        self.step_ids.add(chosen)
        return chosen


def _plain(label: str) -> str:
    name = re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")[:40].strip("_")
    if not name:
        return "value"
    return f"p_{name}" if name[0].isdigit() else name


def _unique(name: str, taken: set[str], *, sep: str = "_") -> str:
    chosen, number = name, 1
    while chosen in taken or chosen in _BUILT_INS:
        number += 1
        chosen = f"{name}{sep}{number}"
    return chosen


def _target(action: ExecutedAction) -> tuple[dict[str, Any] | None, list[str]]:
    """The step's target and the comments it needs (css, ambiguity)."""
    seen = action.element
    if seen is not None and seen.name:
        target: dict[str, Any] = {"role": seen.role, "name": seen.name}
        if seen.within is not None:
            target["within"] = {"role": seen.within[0], "name": seen.within[1]}
        ambiguous = not seen.unique and seen.within is None
        return target, [_AMBIGUOUS_NOTE] if ambiguous else []
    if seen is not None and seen.placeholder:
        return {"placeholder": seen.placeholder}, []
    if action.target is not None:
        given = action.target.model_dump(exclude_defaults=True, exclude_none=True)
        return given, [_CSS_NOTE] if action.target.css is not None else []
    if seen is not None:
        return {"role": seen.role}, [_AMBIGUOUS_NOTE]
    return None, []


def _field_label(action: ExecutedAction) -> str:
    seen, given = action.element, action.target
    if seen is not None and (seen.name or seen.placeholder):
        return seen.name or seen.placeholder or ""
    return (given.matched_text or given.test_id or "") if given is not None else ""


def _sensitive(action: ExecutedAction) -> bool:
    return action.element is not None and action.element.sensitive


def _body(
    draft: _Drafting, action: ExecutedAction, *, submitted: bool
) -> tuple[dict[str, Any], list[str]]:
    """The step's action body (``{"fill": {...}}``) and its comments; ``submitted``: a
    later submission on its tab sends what it typed."""
    kind, value = action.action, action.value
    if kind == "goto":
        return {"goto": _site_url(str(value), draft.site)}, []
    target, notes = _target(action)
    if kind == "press":
        pressed: dict[str, Any] = {"key": value}
        if target is not None:
            pressed["target"] = target
        return {"press": pressed}, notes
    body: dict[str, Any] = {"target": target}
    if kind == "fill":
        secret = _sensitive(action) or value is None
        typed = None if secret else str(value)
        label = _field_label(action)
        body["value"] = draft.param(label, typed, secret=secret, submitted=submitted)
    elif kind == "select" and isinstance(value, str):
        body["value"] = draft.param(_field_label(action), value, secret=_sensitive(action))
    elif kind == "select":
        body["values"] = list(value or ())
    elif kind == "upload":
        body["files"] = list(value) if isinstance(value, tuple) else [value]
    return {kind: body}, notes


def _expectations(action: ExecutedAction, held: Sequence[HeldCheck]) -> list[dict[str, Any]]:
    expect: list[dict[str, Any]] = []
    moved = action.url_before and action.url_after and action.url_after != action.url_before
    if moved and action.action != "goto":
        expect.append({"url": url_glob(action.url_after)})
    expect.extend(action.appeared)
    for made in held:
        check = made.check.model_dump(mode="json", exclude_defaults=True, exclude_none=True)
        if made.tab != action.tab:
            check["tab"] = made.tab
        if check not in expect and "value" not in check:  # a value check repeats typed input
            expect.append(check)
    return expect


def _with_iteration(value: Any, template: str) -> Any:
    """``value`` with ``template`` followed by `` {{ iteration }}`` wherever it stands."""
    if isinstance(value, dict):
        return {k: _with_iteration(v, template) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_iteration(v, template) for v in value]
    if isinstance(value, str):
        return value.replace(template, template + " {{ iteration }}")
    return value


def _lifted_names(value: Any, lifted: Sequence[tuple[str, str]]) -> set[str]:
    """The parameters whose template ``value`` holds."""
    text = json.dumps(value)
    return {name for _, name in lifted if "{{ " + name + " }}" in text}


def _lift(value: Any, lifted: Sequence[tuple[str, str]], key: str = "") -> Any:
    """``value`` with every typed value in its strings replaced by its template, only
    where it stands whole (not inside a word: ``admin`` in ``administration`` stays), and
    never in a URL glob (``**/admin/`` is a path, not the typed name)."""
    if isinstance(value, dict):
        return {k: _lift(v, lifted, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_lift(v, lifted, key) for v in value]
    if not isinstance(value, str) or key in _URL_KEYS:
        return value
    for typed, name in sorted(lifted, key=lambda pair: -len(pair[0])):
        if len(typed) >= _MIN_LIFTED:
            whole = re.compile(r"(?<!\w)" + re.escape(typed) + r"(?!\w)")
            value = whole.sub("{{ " + name + " }}", value)
    return value


def _step(
    draft: _Drafting, action: ExecutedAction, held: Sequence[HeldCheck], *, submitted: bool
) -> tuple[dict[str, Any], list[str]]:
    body, notes = _body(draft, action, submitted=submitted)
    step: dict[str, Any] = {"id": draft.step_id(action), "tab": action.tab, **body}
    if _AMBIGUOUS_NOTE in notes:
        alike = action.element.alike if action.element is not None else ()
        draft.not_unique[step["id"]] = list(alike)
    draft.opened_by.update(dict.fromkeys(action.opened, step["id"]))
    expect = _lift(_expectations(action, held), draft.lifted)
    if action.submit:
        draft.echoed |= _lifted_names(expect, draft.lifted)
    if action.submit:
        step["effect"] = "submit"
        if not expect:
            notes.append("# TODO: nothing visible changed after this submission; add `expect`")
    if expect:
        step["expect"] = expect
    return step, notes


def _grouped(
    history: Sequence[ExecutedAction | HeldCheck],
) -> list[tuple[ExecutedAction, list[HeldCheck]]]:
    """Each action with the checks that held after it and before the next action."""
    grouped: list[tuple[ExecutedAction, list[HeldCheck]]] = []
    for entry in history:
        if isinstance(entry, ExecutedAction):
            grouped.append((entry, []))
        elif grouped:
            grouped[-1][1].append(entry)
    return grouped


def _tabs(tabs: Mapping[str, BoundTab], site: str, opened_by: Mapping[str, str]) -> dict[str, Any]:
    """Each role the runner opens (``start``, ``origins``), then each popup a saved step
    opened (``opened_by`` that step; it keeps its opener's origins)."""
    written: dict[str, Any] = {}
    for role, tab in tabs.items():
        if tab.start is not None:
            origins = ["{{ base_url }}" if o == site else o for o in tab.origins]
            written[role] = {"start": _site_url(tab.start, site), "origins": origins}
        elif role in opened_by:
            written[role] = {"opened_by": opened_by[role]}
    return written


def _submitted(grouped: Sequence[tuple[ExecutedAction, list[HeldCheck]]]) -> list[bool]:
    """For each action: whether a later submission on its tab sends what it typed."""
    return [
        any(later.submit and later.tab == action.tab for later, _ in grouped[index + 1 :])
        for index, (action, _) in enumerate(grouped)
    ]


def draft_recipe(
    name: str,
    tabs: Mapping[str, BoundTab],
    history: Sequence[ExecutedAction | HeldCheck],
    *,
    renames: Mapping[str, str] | None = None,
    session_id: str = "",
) -> DraftedRecipe:
    """The recipe document for a session's history; refused if it could not validate."""
    plain_recipe_name(name)
    grouped = _grouped(history)
    if not grouped:
        raise UsageInvalid(
            "the session has no executed action to save",
            fix="Act on the page first (observations and checks are not steps).",
        )
    site = _origin(next(iter(tabs.values())).start or "")
    draft = _Drafting(site=site, renames=renames or {})
    for (action, held), submitted in zip(grouped, _submitted(grouped), strict=True):
        step, notes = _step(draft, action, held, submitted=submitted)
        draft.steps.append(step)
        draft.notes.append(notes)
    draft.make_unique()
    _check_renames(draft)
    text = _yaml(name, draft, _tabs(tabs, site, draft.opened_by), session_id)
    _refuse_todos(draft, text)
    return DraftedRecipe(
        name=name,
        text=text,
        params=draft.params,
        reasons=draft.reasons,
        not_unique=draft.not_unique,
    )


def _check_renames(draft: _Drafting) -> None:
    unknown = sorted(set(draft.renames) - draft.proposed)
    bad = sorted(v for v in draft.renames.values() if not re.fullmatch(r"[A-Za-z_]\w*", v))
    if unknown or bad:
        what = f"no parameter named {unknown}" if unknown else f"not plain names: {bad}"
        raise UsageInvalid(
            f"params: {what}",
            fix="Map proposed parameter names to plain names; proposed: "
            + (", ".join(sorted(draft.proposed)) or "none"),
        )


def _refuse_todos(draft: _Drafting, text: str) -> None:
    for step, notes in zip(draft.steps, draft.notes, strict=True):
        if any(note.startswith("# TODO: nothing visible") for note in notes):
            raise RecipeInvalid(
                f"submission step {step['id']!r} has no expectation: nothing visible changed "
                "after it (no new URL, heading or status), so its outcome could not be verified",
                step=step["id"],
                fix="Check what the submission shows (the check tool) right after it, then "
                "save again.",
            )


class _RecipeDumper(yaml.SafeDumper):
    """Small mappings of plain values on one line (``{role: button, name: Send}``)."""


def _mapping(dumper: yaml.SafeDumper, value: dict[str, Any]) -> yaml.MappingNode:
    plain = not any(isinstance(v, dict | list) for v in value.values())
    leaf = plain and len(value) <= 4 and "id" not in value  # a step stays a block
    return dumper.represent_mapping("tag:yaml.org,2002:map", value.items(), flow_style=leaf)


_RecipeDumper.add_representer(dict, _mapping)


def _dump(value: Any) -> str:
    return yaml.dump(value, Dumper=_RecipeDumper, sort_keys=False, allow_unicode=True, width=100)


def _yaml(name: str, draft: _Drafting, tabs: dict[str, Any], session_id: str) -> str:
    origin = f"agent session {session_id}" if session_id else "an agent session"
    head: dict[str, Any] = {
        "name": name,
        "version": 1,
        "description": f"Saved from {origin}; runs with --base-url.",
    }
    if draft.params:
        head["params"] = draft.params
    head["tabs"] = tabs
    lines = [_dump(head).rstrip("\n"), "steps:"]
    for step, notes in zip(draft.steps, draft.notes, strict=True):
        lines.extend(f"  {note}" for note in notes)
        lines.extend(f"  {line}" for line in _dump([step]).rstrip("\n").split("\n"))
    return "\n".join(lines) + "\n"
