"""From a codegen script's statements to a recipe draft: steps, checks, parameters, tabs.

Pure decisions over the records ``script`` read; ``emit`` writes the draft as YAML.

- **Steps**: ``goto``, ``click``, ``dblclick`` (a click with ``count: 2``), ``fill``,
  ``press``, ``check``, ``uncheck``, ``select_option``, ``set_input_files`` (``upload``),
  ``hover``, ``press_sequentially``/``type`` (a ``fill``), ``keyboard.press`` (a ``press``
  without target) and ``wait_for_url`` (a ``wait_for``). The focus click codegen records
  right before typing into the same field is folded into that ``fill``.
- **Checks**: each ``expect(...)`` becomes a check of the step before it (``tab:`` when it
  looks at another tab); an expectation with no step before it is a ``verify_outcome``.
  A URL becomes a glob of its path with query values as ``*`` (ids differ per run).
- **Tabs**: each page variable is a tab role; the first ``goto`` of a runner-opened page
  is its ``start``; a popup (``async with page.expect_popup() as info``) is ``opened_by``
  the step inside the block. The first URL's origin is written ``{{ base_url }}``.
- **Parameters**: every typed or chosen value; a password field's is ``secret``, without
  a default, and its value is replaced by ``{{ name }}`` wherever it would be written.
- **Submissions**: see ``submissions``. Anything else is kept as a comment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from northstar.authoring import _urls
from northstar.authoring.checks import Expectation, expectation
from northstar.authoring.script import (
    Action,
    Block,
    Chain,
    Link,
    NewPage,
    PopupValue,
    Skipped,
    Statement,
    Unknown,
)
from northstar.authoring.steps import DraftStep, Param, ParamBook, step_id
from northstar.authoring.targets import Located, Unsupported, locate

__all__ = ["Draft", "convert_statements"]

_TYPING = {"fill", "press_sequentially", "type"}
_TARGET_ONLY = {"check": "check", "uncheck": "uncheck", "hover": "hover"}
_TYPED_TEXT = re.compile(r"(\.(?:type|insert_text|press_sequentially|fill)\()[^)]*\)")


@dataclass
class Draft:
    """A recipe as data, with its comments, before it is written."""

    params: dict[str, Param]
    tabs: dict[str, dict[str, Any]]
    steps: list[DraftStep]
    trailing: list[str]
    secrets: list[str]  # the typed secret values: never written, only replaced
    secret_lifter: Callable[[str], str]
    site: str | None = None  # the origin written as {{ base_url }}
    unknown_lines: list[int] = field(default_factory=list)


@dataclass
class _Tab:
    start: str | None = None
    opened_by: str | None = None
    origins: list[str] = field(default_factory=list)


class _Converter:
    """Walks the statements once, in order, and keeps the draft being built."""

    def __init__(self) -> None:
        self.urls = _urls.SiteUrls()
        self.params = ParamBook()
        self.tabs: dict[str, _Tab] = {}
        self.steps: list[DraftStep] = []
        self.pending: list[str] = []
        self.unknown: list[int] = []
        self.openers: dict[str, str] = {}
        self.focused: tuple[str, Located] | None = None

    def run(self, statements: Sequence[Statement]) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, statement: Statement) -> None:
        if isinstance(statement, NewPage):
            self.tabs.setdefault(statement.page, _Tab())
        elif isinstance(statement, PopupValue):
            self.popup(statement)
        elif isinstance(statement, Block):
            self.block(statement)
        elif isinstance(statement, Action):
            self.action(statement)
        elif isinstance(statement, Unknown):
            self.keep(statement.line, statement.source, statement.reason)
        else:
            assert isinstance(statement, Skipped)

    def keep(self, line: int, source: str, reason: str = "") -> None:
        """An unconverted line, as a comment before the next step."""
        self.unknown.append(line)
        text = _TYPED_TEXT.sub(r"\1<typed text not kept>)", " ".join(source.split()))
        self.pending.append(f"codegen line {line}: {text}" + (f"  ({reason})" if reason else ""))

    def popup(self, statement: PopupValue) -> None:
        opener = self.openers.get(statement.info)
        if opener is None:
            self.keep(statement.line, f"{statement.page} = await {statement.info}.value")
            return
        self.tabs[statement.page] = _Tab(opened_by=opener)

    def block(self, block: Block) -> None:
        kind = block.chain.links[-1].name if block.chain.links else ""
        before = len(self.steps)
        if kind not in ("expect_popup", "expect_navigation"):
            self.keep(block.line, block.source, "its body is converted below")
        self.run(block.body)
        made = self.steps[before:]
        if not made:
            return
        if kind == "expect_popup" and block.alias:
            self.openers[block.alias] = str(made[-1].body["id"])
        if kind == "expect_navigation":
            made[-1].navigates = True

    def action(self, action: Action) -> None:
        chain = action.chain
        if chain.root == "expect" and chain.subject is not None:
            self.expect(action, chain.subject, chain.links)
            return
        if chain.root not in self.tabs or not chain.links or not chain.links[-1].called:
            self.keep(action.line, action.source)
            return
        try:
            self.tab_action(action, chain.root, chain.links)
        except Unsupported as exc:
            self.keep(action.line, action.source, str(exc))

    def tab_action(self, action: Action, tab: str, links: tuple[Link, ...]) -> None:
        method, locator = links[-1], links[:-1]
        if not locator:
            self.page_action(action, tab, method)
        elif [link.name for link in locator] == ["keyboard"] and method.name == "press":
            self.add(action, tab, {"press": {"key": _one_text(method)}}, f"press {method.args[0]}")
        else:
            self.element_action(action, tab, locate(locator), method)

    def page_action(self, action: Action, tab: str, method: Link) -> None:
        if method.name == "goto":
            self.goto(action, tab, _one_text(method))
        elif method.name == "wait_for_url":
            check = self.urls.url_check(_one_arg(method))
            self.add(action, tab, {"wait_for": check}, "wait for url")
        elif method.name == "close":
            self.keep(action.line, action.source, "no step kind closes a tab; it closes at the end")
        else:
            raise Unsupported(f"no step kind for `{method.name}`")

    def goto(self, action: Action, tab: str, url: str) -> None:
        role = self.tabs[tab]
        if role.start is None and role.opened_by is None and not self._has_steps(tab):
            role.start = self.urls.start(url)
            self.note_origin(tab, url)
            self.pending.append(
                f"codegen line {action.line}: the first goto is the start of tab {tab}"
            )
            return
        self.note_origin(tab, url)
        path = self.urls.goto(url)
        self.add(action, tab, {"goto": path}, f"goto {path.split('?')[0]}")  # no query values

    def element_action(self, action: Action, tab: str, located: Located, method: Link) -> None:
        target = located.target
        name = method.name
        if name in _TYPING:
            self.type_into(action, tab, located, method)
        elif name in ("click", "dblclick"):
            self.click(action, tab, located, method)
        elif name in _TARGET_ONLY and not method.args:
            self.add(action, tab, {name: {"target": target}}, f"{name} {located.field}", located)
        elif name == "set_checked" and len(method.args) == 1:
            kind = "check" if method.args[0] else "uncheck"
            self.add(action, tab, {kind: {"target": target}}, f"{kind} {located.field}", located)
        elif name == "press":
            body = {"press": {"key": _one_text(method), "target": target}}
            step = self.add(action, tab, body, f"press {method.args[0]} {located.field}", located)
            step.click_name = (
                str(target.get("name") or "") if target.get("role") == "button" else ""
            )
        elif name == "select_option":
            self.select(action, tab, located, method)
        elif name == "set_input_files":
            self.upload(action, tab, located, method)
        else:
            raise Unsupported(f"no step kind for `{name}`")

    def click(self, action: Action, tab: str, located: Located, method: Link) -> None:
        body: dict[str, Any] = {"target": located.target}
        count = 2 if method.name == "dblclick" else method.kwarg("click_count", 1)
        if count != 1:
            body["count"] = count
        if method.kwarg("button", "left") != "left":
            body["button"] = method.kwarg("button")
        dropped = [key for key, _ in method.kwargs if key not in ("button", "click_count")]
        if dropped:
            self.keep(action.line, action.source, f"{', '.join(dropped)} not kept")
        step = self.add(action, tab, {"click": body}, f"click {located.field}", located)
        self.focused = (tab, located) if method.name == "click" and not dropped else None
        step.click_name = str(located.target.get("name") or located.target.get("text") or "")

    def type_into(self, action: Action, tab: str, located: Located, method: Link) -> None:
        value = _one_text(method)
        param = self.params.typed(located.field, value, secret=located.secret)
        self.fold_focus_click(tab, located)
        body = {"fill": {"target": located.target, "value": "{{ " + param + " }}"}}
        step = self.add(action, tab, body, f"fill {located.field}", located)
        step.typed = True
        if method.name != "fill":
            step.comments.append(f"codegen: {method.name} typed key by key; a fill here")

    def fold_focus_click(self, tab: str, located: Located) -> None:
        """Codegen clicks a field before typing into it; that click is part of the fill."""
        if self.focused == (tab, located) and self.steps and "click" in self.steps[-1].body:
            folded = self.steps.pop()
            self.pending[:0] = [*folded.comments, f"codegen line {folded.line}: focus click folded"]

    def select(self, action: Action, tab: str, located: Located, method: Link) -> None:
        choice: Any = method.args[0] if len(method.args) == 1 else method.kwarg("label")
        key = "label" if method.kwarg("label") is not None and not method.args else "value"
        if isinstance(choice, list | tuple) and all(isinstance(c, str) for c in choice):
            body = {"target": located.target, "values": list(choice)}
        elif isinstance(choice, str):
            param = self.params.typed(located.field, choice, secret=False)
            body = {"target": located.target, key: "{{ " + param + " }}"}
        else:
            raise Unsupported("select_option with these arguments")
        step = self.add(action, tab, {"select": body}, f"select {located.field}", located)
        step.typed = True

    def upload(self, action: Action, tab: str, located: Located, method: Link) -> None:
        files = method.args[0] if len(method.args) == 1 else None
        files = [files] if isinstance(files, str) else files
        if not files or not all(isinstance(f, str) for f in files):
            raise Unsupported("set_input_files with these arguments")
        body = {"upload": {"target": located.target, "files": list(files)}}
        step = self.add(action, tab, body, f"upload {located.field}", located)
        step.comments.append(
            "codegen: put the uploaded files beside the recipe (paths are relative to it)"
        )

    def expect(self, action: Action, subject: Chain, links: tuple[Link, ...]) -> None:
        tab = subject.root
        try:
            if tab not in self.tabs or len(links) != 1:
                raise Unsupported("an expectation of something other than a tab or an element")
            found = expectation(subject.links, links[0], self.urls)
        except Unsupported as exc:
            self.keep(action.line, action.source, str(exc))
            return
        self.attach(action, tab, found)

    def attach(self, action: Action, tab: str, found: Expectation) -> None:
        check = dict(found.check)
        self.note_url_origin(tab, found.url)
        if not self.steps:
            self.add(action, tab, {"verify_outcome": check}, f"verify {found.label}")
            return
        step = self.steps[-1]
        if step.body["tab"] != tab:
            check["tab"] = tab
        step.body.setdefault("expect", []).append(check)
        step.comments.extend(found.notes)

    def add(
        self,
        action: Action,
        tab: str,
        body: dict[str, Any],
        label: str,
        located: Located | None = None,
    ) -> DraftStep:
        ids = {str(step.body["id"]) for step in self.steps}
        step = DraftStep({"id": step_id(label, ids), "tab": tab, **body}, action.line)
        step.comments = [*self.pending, *(located.notes if located else ())]
        self.pending = []
        self.focused = None
        self.steps.append(step)
        return step

    def note_origin(self, tab: str, url: str) -> None:
        origin = self.urls.origin_text(url)
        if origin is not None and origin not in self.tabs[tab].origins:
            self.tabs[tab].origins.append(origin)

    def note_url_origin(self, tab: str, url: str | None) -> None:
        if url is not None:
            self.note_origin(tab, url)

    def _has_steps(self, tab: str) -> bool:
        return any(step.body["tab"] == tab for step in self.steps)


def convert_statements(statements: Sequence[Statement]) -> Draft:
    """The recipe draft for a script's statements (``script.read_script``)."""
    converter = _Converter()
    converter.run(statements)
    renamed = _ids_without_secrets(converter.steps, converter.params.secret_values)
    for tab in converter.tabs.values():
        tab.opened_by = renamed.get(tab.opened_by or "", tab.opened_by)
    tabs = {name: _tab_data(name, tab) for name, tab in converter.tabs.items()}
    lift = converter.params.lifter()
    for step in converter.steps:
        step.body = _lifted(step.body, lift)
    return Draft(
        params=converter.params.params,
        tabs=tabs,
        steps=converter.steps,
        trailing=converter.pending,
        secrets=converter.params.secret_values,
        secret_lifter=converter.params.secret_lifter(),
        site=converter.urls.site,
        unknown_lines=converter.unknown,
    )


def _ids_without_secrets(steps: Sequence[DraftStep], secrets: Sequence[str]) -> dict[str, str]:
    """Step ids come from URLs and names; one that spells a secret is renamed by position."""
    hidden = [step_id(value, ()) for value in secrets]
    renamed: dict[str, str] = {}
    for number, step in enumerate(steps, start=1):
        old = str(step.body["id"])
        if any(part in old for part in hidden if part != "step"):
            renamed[old] = step.body["id"] = f"step-{number}"
    return renamed


def _tab_data(name: str, tab: _Tab) -> dict[str, Any]:
    if tab.opened_by is not None:
        data: dict[str, Any] = {"opened_by": tab.opened_by}
    else:
        data = {"start": tab.start or "about:blank"}
    if tab.origins:
        data["origins"] = list(tab.origins)
    return data


def _lifted(body: dict[str, Any], lift: Callable[[str], str]) -> dict[str, Any]:
    """Typed values inside checks become their parameters (fresh values, fresh checks)."""
    if "expect" in body:
        body = {**body, "expect": [_deep(check, lift) for check in body["expect"]]}
    for passive in ("verify_outcome", "wait_for"):
        if passive in body:
            body = {**body, passive: _deep(body[passive], lift)}
    return body


def _deep(value: Any, lift: Callable[[str], str]) -> Any:
    if isinstance(value, dict):
        return {
            k: v if k in ("url", "url_regex", "tab") else _deep(v, lift) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_deep(v, lift) for v in value]
    return lift(value) if isinstance(value, str) else value


def _one_arg(method: Link) -> Any:
    if len(method.args) != 1:
        raise Unsupported(f"`{method.name}` with these arguments")
    return method.args[0]


def _one_text(method: Link) -> str:
    value = _one_arg(method)
    if not isinstance(value, str):
        raise Unsupported(f"`{method.name}` needs one text argument")
    return value
