"""Observations: a structured, redacted reading of one tab, as plain data.

An ``Observation`` is what the agent and the ``BehaviorMonitor`` see of a tab: its URL and
title, the frames in scope, the accessibility tree as ``Node``s (role, name, value, states and
the element reference that is valid while this snapshot is current), tables, media and the
visible text. Secrets are replaced by ``[redacted]`` when the observation is built, so nothing
downstream (fingerprints, screen changes, logs, the journal) can leak them.

The browser adapter reads the page (Playwright's AI-mode aria snapshot plus a little DOM state
for media and password fields); everything here is pure, so it is tested on plain text.

The snapshot text is a YAML subset written by Playwright: one entry per line,
``- role "name" [attr] [attr=value] [ref=eN]: text``, two spaces of indent per level, keys
single-quoted and values double-quoted only when YAML needs it, ``- text: ...`` for text and
``- /url: ...`` for properties of the entry above. It is parsed line by line instead of with a
YAML library because that is several times faster on large pages and needs no dependency.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict

from northstar.monitor.positions import shown_nodes
from northstar.redaction import REDACTED, secret_matcher

__all__ = [
    "CONTROL_ROLES",
    "EDITABLE_ROLES",
    "NAMED_BY_CONTENT",
    "NO_STATES",
    "ElementRef",
    "FrameScope",
    "MediaState",
    "Node",
    "NodeStates",
    "Observation",
    "ParsedPage",
    "TableData",
    "assemble_observation",
    "build_observation",
    "content_text",
    "node_label",
    "parse_aria_snapshot",
    "scrub_secrets",
]

# Roles of elements a person operates; their states are the page's control states.
CONTROL_ROLES = frozenset(
    [
        "button",
        "checkbox",
        "combobox",
        "link",
        "listbox",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "radio",
        "searchbox",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "textbox",
        "treeitem",
    ]
)
# Roles whose value is what a person typed or chose, not text the page wrote.
EDITABLE_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "slider"})
# Roles that only group other nodes; without a name or text they carry no meaning of their own.
_STRUCTURAL_ROLES = frozenset({"generic", "none", "presentation"})
_TABLE_ROLES = frozenset({"table", "grid", "treegrid"})
_CELL_ROLES = frozenset({"columnheader", "rowheader", "cell", "gridcell"})
_LABEL_NAME_LIMIT = 80


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True, slots=True)
class NodeStates:
    """The states Playwright reports for a node; absent in the snapshot means false."""

    checked: bool | Literal["mixed"] = False
    disabled: bool = False
    expanded: bool = False
    selected: bool = False
    pressed: bool | Literal["mixed"] = False
    level: int | None = None
    invalid: str | None = None
    focused: bool = False

    def labels(self, *, include_focus: bool = True) -> tuple[str, ...]:
        """Short words for the states that are set, e.g. ``("checked", "level=2")``."""
        words: list[str] = []
        for name in ("checked", "disabled", "expanded", "selected", "pressed"):
            flag = getattr(self, name)
            if flag:
                words.append(name if flag is True else f"{name}={flag}")
        if self.level is not None:
            words.append(f"level={self.level}")
        if self.invalid is not None:
            words.append(f"invalid={self.invalid}")
        if include_focus and self.focused:
            words.append("focused")
        return tuple(words)


@dataclass(frozen=True, slots=True)
class Node:
    """One entry of the accessibility tree.

    ``path`` is the ancestry as ``role "name"`` labels, ending with this node; nodes that only
    group others (an unnamed ``generic``) are left out of paths, so a wrapper ``div`` added by
    a re-render does not move everything below it. ``ref`` acts on the element only while the
    observation it came from is the tab's current one.
    """

    role: str
    name: str = ""
    ref: str | None = None
    value: str | None = None
    url: str | None = None
    placeholder: str | None = None
    states: NodeStates = field(default_factory=NodeStates)
    path: tuple[str, ...] = ()
    sensitive: bool = False

    @property
    def structural(self) -> bool:
        """True for grouping nodes that carry no name, text or state of their own."""
        return self.role in _STRUCTURAL_ROLES and not self.name and self.value is None

    @property
    def label(self) -> str:
        """``role "name"`` as shown in paths and screen changes."""
        return node_label(self.role, self.name)


class TableData(_Frozen):
    """A table's text: the header row and the body rows, cell by cell."""

    name: str = ""
    headers: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()


class MediaState(_Frozen):
    """An image, video or audio element and the state a person would notice."""

    kind: Literal["image", "video", "audio"]
    name: str = ""
    src: str = ""
    loaded: bool | None = None
    paused: bool | None = None
    ended: bool | None = None
    muted: bool | None = None
    current_time: float | None = None


class FrameScope(_Frozen):
    """A frame of the tab: the main document is index 0, ``parent`` points up the tree."""

    index: int
    name: str = ""
    url: str
    parent: int | None = None


class ElementRef(_Frozen):
    """A reference to act on, tied to the snapshot it was read from."""

    snapshot_id: str
    ref: str


# The meaningful nodes of a node tuple, by its identity: the observations of an unchanged
# page share one tuple (``SnapshotReader``, ``assemble_observation``). The tuple is held with
# them, so its id cannot be reused while the entry exists; bounded: cleared when full.
_MEANINGFUL: dict[int, tuple[tuple[Node, ...], tuple[Node, ...]]] = {}
_MEANINGFUL_HELD = 32


class Observation(_Frozen):
    """A structured reading of one tab at one moment (see the module docstring)."""

    tab: str
    url: str
    title: str = ""
    snapshot_id: str
    frames: tuple[FrameScope, ...] = ()
    nodes: tuple[Node, ...] = ()
    text: str = ""
    tables: tuple[TableData, ...] = ()
    media: tuple[MediaState, ...] = ()

    @cached_property
    def _by_ref(self) -> dict[str, Node]:
        return {node.ref: node for node in self.nodes if node.ref is not None}

    def node_for_ref(self, ref: str) -> Node | None:
        """The node that ``ref`` names in this observation, if any."""
        return self._by_ref.get(ref)

    def reference(self, ref: str) -> ElementRef:
        """``ref`` bound to this observation's snapshot, for acting on it later."""
        return ElementRef(snapshot_id=self.snapshot_id, ref=ref)

    @cached_property
    def meaningful_nodes(self) -> tuple[Node, ...]:
        """The nodes without the structural ones (wrappers with no name, text or value).

        What fingerprints, screen changes and the page's text compare; kept once read.
        After a change, only the positions that hold new node objects are looked at again.
        """
        held = _MEANINGFUL.get(id(self.nodes))
        if held is not None and held[0] is self.nodes:
            return held[1]
        shown = shown_nodes(self.tab, self.nodes)  # reuses the tab's previous reading
        if len(_MEANINGFUL) >= _MEANINGFUL_HELD:
            _MEANINGFUL.clear()
        _MEANINGFUL[id(self.nodes)] = (self.nodes, shown)
        return shown

    def controls(self) -> tuple[Node, ...]:
        """The nodes a person can operate (buttons, links, fields, ...) with their states."""
        return tuple(n for n in self.nodes if n.role in CONTROL_ROLES)


# Roles whose accessible name comes from their content: the page's snapshot leaves such a
# name off the node when a child element shows it (``<button><svg/><em>Publish</em>``).
NAMED_BY_CONTENT = frozenset(
    {"button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option"}
)


def content_text(nodes: Sequence[Node], index: int) -> str:
    """The names and text of ``nodes[index]``'s descendants (``nodes`` in page order, as
    the snapshot gives them): what names a nameless button or link on the page."""
    node, depth = nodes[index], len(nodes[index].path)
    words: list[str] = []
    for child in nodes[index + 1 :]:  # pre-order: descendants come next, together
        if len(child.path) <= depth or child.path[:depth] != node.path:
            break
        words.extend(t for t in (child.name, child.value) if t)
    return " ".join(" ".join(words).split())


def node_label(role: str, name: str) -> str:
    """``role`` or ``role "name"``; long names are shortened so paths stay readable."""
    if not name:
        return role
    if len(name) > _LABEL_NAME_LIMIT:
        name = name[: _LABEL_NAME_LIMIT - 1] + "…"
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'{role} "{escaped}"'


# Parsing


@dataclass(slots=True)
class _RawNode:
    """A snapshot entry while the tree is being built and redacted."""

    role: str
    name: str = ""
    attrs: dict[str, str] = field(default_factory=dict)
    value: str | None = None
    url: str | None = None
    placeholder: str | None = None
    sensitive: bool = False
    children: list[_RawNode] = field(default_factory=list)
    parent: int = -1  # index in document order; an index, not a link, so no cycles for the GC


_ATTR = re.compile(r"\[([a-z-]+)(?:=([^\]]*))?\]")
_VALUE_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|.)")
_DOUBLE_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_SINGLE_QUOTED = re.compile(r"'(?:[^']|'')*'")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", '"': '"', "\\": "\\"}


def _unquote_value(text: str) -> str:
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return text
    return _VALUE_ESCAPE.sub(_unescape, text[1:-1])


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) == 3:
        return chr(int(code[1:], 16))
    return _ESCAPES.get(code, code)


def _split_entry(entry: str) -> tuple[str, str | None]:
    """Split ``key: value`` into key and value (``None`` when there is no inline value)."""
    quoted = _SINGLE_QUOTED.match(entry) if entry.startswith("'") else None
    if quoted is not None:
        end = quoted.end()
        key, rest = entry[1 : end - 1].replace("''", "'"), entry[end:]
    else:
        cut = entry.find(": ")
        if cut >= 0:
            key, rest = entry[:cut], entry[cut:]
        elif entry.endswith(":"):
            key, rest = entry[:-1], ":"
        else:
            key, rest = entry, ""
    if rest.startswith(": "):
        return key, _unquote_value(rest[2:])
    return key, None


def _parse_key(key: str) -> _RawNode:
    role, _, rest = key.partition(" ")
    name = ""
    quoted = _DOUBLE_QUOTED.match(rest)
    if quoted is not None:
        name = _json_string(quoted.group())
        rest = rest[quoted.end() :]
    return _RawNode(role=role, name=name, attrs=dict(_ATTR.findall(rest)))


def _json_string(quoted: str) -> str:
    """The text of a JSON string literal (names are written with ``JSON.stringify``)."""
    if "\\" not in quoted:
        return quoted[1:-1]
    try:
        text: str = json.loads(quoted)
    except ValueError:  # Not valid JSON after all; keep what is between the quotes.
        return quoted[1:-1]
    return text


def _entry_node(key: str, value: str | None) -> _RawNode:
    if key == "text":
        return _RawNode(role="text", name=value or "")
    node = _parse_key(key)
    node.value = value
    return node


def _parse_tree(text: str) -> list[_RawNode]:
    """The snapshot's entries in document order, linked as a tree; other lines are skipped.

    Lines come in pre-order, so the list is the tree's pre-order walk: passes over every
    node iterate it instead of walking the tree.
    """
    root = _RawNode(role="document")
    order: list[_RawNode] = []
    stack: list[tuple[int, _RawNode, int]] = [(-1, root, -1)]
    for line in text.split("\n"):  # Not splitlines(): U+2028 and friends are text here.
        # ``( *)- (.*)`` without a regex: string methods are faster on thousands of lines.
        entry = line.lstrip(" ")
        if not entry.startswith("- "):
            continue
        depth = len(line) - len(entry)
        key, value = _split_entry(entry[2:])
        while stack[-1][0] >= depth:
            stack.pop()
        _, parent, parent_index = stack[-1]
        if key.startswith("/"):
            _set_property(parent, key[1:], value)
            continue
        node = _entry_node(key, value)
        node.parent = parent_index
        parent.children.append(node)
        stack.append((depth, node, len(order)))
        order.append(node)
    return order


def _set_property(node: _RawNode, name: str, value: str | None) -> None:
    if name == "url":
        node.url = value
    elif name == "placeholder":
        node.placeholder = value


def _walk(roots: Sequence[_RawNode]) -> Iterator[_RawNode]:
    """Pre-order without recursion: pages can nest deeper than Python's stack allows."""
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


# Redaction


def _make_scrubber(secrets: Collection[str]) -> Callable[[str], str] | None:
    """A function that replaces every secret value (in any of its forms) in a string.

    ``None`` when there are no secrets, so callers can skip the text altogether.
    """
    matcher = secret_matcher([s for s in secrets if s.strip()])
    if matcher is None:
        return None
    return lambda text: matcher.sub(REDACTED, text)


def _unchanged(text: str) -> str:
    return text


def scrub_secrets(secrets: Collection[str]) -> Callable[[str], str]:
    """A function that replaces every secret value (in any of its forms) in a string."""
    return _make_scrubber(secrets) or _unchanged


def _optional(scrub: Callable[[str], str], text: str | None) -> str | None:
    return None if text is None else scrub(text)


def _redact_tree(
    nodes: Sequence[_RawNode],
    scrub: Callable[[str], str] | None,
    sensitive_refs: Collection[str],
    password_values: Collection[str],
) -> None:
    """Scrub secrets everywhere and blank the values of password fields, in place.

    ``scrub`` is ``None`` when there is no secret to look for; with no password field
    either, nothing can change and the tree is not walked.
    """
    passwords = {p for p in password_values if p}
    if scrub is None and not sensitive_refs and not passwords:
        return
    for node in nodes:
        _redact_node(node, scrub or _unchanged, sensitive_refs, passwords)


def _redact_node(
    node: _RawNode,
    scrub: Callable[[str], str],
    sensitive_refs: Collection[str],
    passwords: Collection[str],
) -> None:
    node.name = scrub(node.name)
    node.value, node.url = _optional(scrub, node.value), _optional(scrub, node.url)
    node.placeholder = _optional(scrub, node.placeholder)
    is_password = node.attrs.get("ref") in sensitive_refs or (
        node.role in EDITABLE_ROLES and node.value in passwords
    )
    if is_password:
        node.sensitive = True
        node.value = REDACTED if node.value else node.value


# Conversion to plain data


def _states(attrs: dict[str, str]) -> NodeStates:
    def flag(name: str) -> bool | Literal["mixed"]:
        if name not in attrs:
            return False
        return "mixed" if attrs[name] == "mixed" else True

    level = attrs.get("level", "")
    return NodeStates(
        checked=flag("checked"),
        disabled="disabled" in attrs,
        expanded="expanded" in attrs,
        selected="selected" in attrs,
        pressed=flag("pressed"),
        level=int(level) if level.isdigit() else None,
        invalid=attrs.get("invalid", "true") if "invalid" in attrs else None,
        focused="active" in attrs,
    )


# Shared by every node without states, so readers can skip them by identity (``is``).
NO_STATES = NodeStates()
_NOT_STATES = frozenset({"ref", "cursor", "box"})


def _to_node(raw: _RawNode, path: tuple[str, ...]) -> Node:
    states = _states(raw.attrs) if raw.attrs.keys() - _NOT_STATES else NO_STATES
    return Node(
        ref=raw.attrs.get("ref"),
        role=raw.role,
        name=raw.name,
        value=raw.value,
        url=raw.url,
        placeholder=raw.placeholder,
        states=states,
        path=path,
        sensitive=raw.sensitive,
    )


def _is_structural(raw: _RawNode) -> bool:
    return raw.role in _STRUCTURAL_ROLES and not raw.name and raw.value is None


def _flatten(nodes: Sequence[_RawNode]) -> tuple[Node, ...]:
    """Nodes in document order, each with the labels of its meaningful ancestors."""
    out: list[Node] = []
    paths: list[tuple[str, ...]] = []
    for raw in nodes:  # parents come before their children
        parent_path = paths[raw.parent] if raw.parent >= 0 else ()
        structural = _is_structural(raw)
        path = parent_path if structural else (*parent_path, node_label(raw.role, raw.name))
        paths.append(path)
        out.append(_to_node(raw, path))
    return tuple(out)


def _visible_text(nodes: Sequence[_RawNode]) -> str:
    """The text a person reads: text entries, inline values, and names of leaf controls."""
    lines: list[str] = []
    for node in nodes:
        if node.role == "text":
            lines.append(node.name)
        elif node.value:
            lines.append(node.value)
        elif node.name and not node.children:
            lines.append(node.name)
    return "\n".join(line for line in lines if line)


def _cell_text(cell: _RawNode) -> str:
    if cell.name:
        return cell.name
    if cell.value is not None:
        return cell.value
    return " ".join(t for t in (n.name or n.value or "" for n in _walk(cell.children)) if t)


def _rows(table: _RawNode) -> Iterator[_RawNode]:
    """The table's rows, without descending into nested tables."""
    stack = list(reversed(table.children))
    while stack:
        node = stack.pop()
        if node.role == "row":
            yield node
        elif node.role not in _TABLE_ROLES:
            stack.extend(reversed(node.children))


def _table(table: _RawNode) -> TableData:
    headers: tuple[str, ...] = ()
    rows: list[tuple[str, ...]] = []
    for row in _rows(table):
        cells = [c for c in row.children if c.role in _CELL_ROLES]
        texts = tuple(_cell_text(c) for c in cells)
        if not headers and cells and all(c.role == "columnheader" for c in cells):
            headers = texts
        elif texts:
            rows.append(texts)
    return TableData(name=table.name, headers=headers, rows=tuple(rows))


def _tables(nodes: Sequence[_RawNode]) -> tuple[TableData, ...]:
    return tuple(_table(n) for n in nodes if n.role in _TABLE_ROLES)


def parse_aria_snapshot(
    snapshot_text: str,
    *,
    secret_values: Collection[str] = (),
    sensitive_refs: Collection[str] = (),
) -> tuple[Node, ...]:
    """The nodes of an AI-mode aria snapshot, redacted, in document order."""
    nodes = _parse_tree(snapshot_text)
    _redact_tree(nodes, _make_scrubber(secret_values), set(sensitive_refs), ())
    return _flatten(nodes)


def _scrub_media(item: MediaState, scrub: Callable[[str], str]) -> MediaState:
    return item.model_copy(update={"name": scrub(item.name), "src": scrub(item.src)})


def _scrub_frame(frame: FrameScope, scrub: Callable[[str], str]) -> FrameScope:
    return frame.model_copy(update={"name": scrub(frame.name), "url": scrub(frame.url)})


def build_observation(
    *,
    tab: str,
    url: str,
    snapshot_text: str,
    snapshot_id: str,
    title: str = "",
    frames: Sequence[FrameScope] = (),
    media: Sequence[MediaState] = (),
    secret_values: Collection[str] = (),
    sensitive_refs: Collection[str] = (),
    password_values: Collection[str] = (),
) -> Observation:
    """Assemble a redacted ``Observation`` from what the adapter read off the page.

    ``sensitive_refs`` are the references of password fields; ``password_values`` their
    current values, used as a second net: an editable node showing one of them is treated as
    a password field even if its reference changed between the two reads.
    """
    scrubber = _make_scrubber(secret_values)
    nodes = _parse_tree(snapshot_text)
    _redact_tree(nodes, scrubber, set(sensitive_refs), password_values)
    page = ParsedPage(_flatten(nodes), _visible_text(nodes), _tables(nodes))
    return assemble_observation(
        page,
        scrubber or _unchanged,
        tab=tab,
        url=url,
        title=title,
        snapshot_id=snapshot_id,
        frames=frames,
        media=media,
    )


@dataclass(frozen=True, slots=True)
class ParsedPage:
    """What a snapshot's text yields, redacted: nodes, visible text and tables."""

    nodes: tuple[Node, ...]
    text: str
    tables: tuple[TableData, ...]


def assemble_observation(
    page: ParsedPage,
    scrub: Callable[[str], str],
    *,
    tab: str,
    url: str,
    title: str,
    snapshot_id: str,
    frames: Sequence[FrameScope],
    media: Sequence[MediaState],
) -> Observation:
    """The ``Observation`` of a parsed page and what else was read off the tab, scrubbed.

    Built without validation: every part is already typed plain data, and validating would
    copy the node tuple, whose identity lets the readers of an unchanged page skip work.
    """
    return Observation.model_construct(
        tab=tab,
        url=scrub(url),
        title=scrub(title),
        snapshot_id=snapshot_id,
        frames=tuple(_scrub_frame(f, scrub) for f in frames),
        nodes=page.nodes,
        text=page.text,
        tables=page.tables,
        media=tuple(_scrub_media(m, scrub) for m in media),
    )
