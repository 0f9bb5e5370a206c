"""Read successive snapshots of one tab, parsing only what changed since the previous one.

An agent observes the same tab again and again, and an action changes a few lines of a
snapshot of thousands. ``SnapshotReader`` gives the same ``ParsedPage`` as a full parse
(``build_observation``) but keeps what it parsed: a subtree (an entry and the lines below
it) yields the same nodes, visible text and tables whenever its text and the path of its
parent are the same, so those two are the key, and an unchanged subtree of a later snapshot
is taken as it is, its ``Node`` objects included (which lets the fingerprints and the
screen change skip what they already saw). Only entries whose subtree text changed (the
changed line and its ancestors) are parsed again.

What a subtree yields depends on the redaction too (secrets, password fields), so the
reader forgets everything when those change. Snapshots nested deeper than
``_MAX_REUSE_DEPTH`` are parsed in full: the reuse walk recurses once per level.

The keys are raw snapshot text, secrets included, held in memory only to compare the next
snapshot with; what the reader returns is redacted. One reader per tab; not for concurrent
use (each ``read`` is synchronous).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field

from northstar.monitor.observation import (
    _TABLE_ROLES,
    Node,
    ParsedPage,
    TableData,
    _entry_node,
    _flatten,
    _is_structural,
    _make_scrubber,
    _parse_tree,
    _RawNode,
    _redact_node,
    _redact_tree,
    _set_property,
    _split_entry,
    _table,
    _tables,
    _to_node,
    _unchanged,
    _visible_text,
    node_label,
)

__all__ = ["SnapshotReader"]

_MAX_REUSE_DEPTH = 200  # levels; deeper pages are parsed in full (no deep recursion)
_KEEP_BLOCKS = 4  # the memo may hold this many times the blocks of the latest snapshot

_Key = tuple[tuple[str, ...], str]  # (the parent's path, the subtree's text)
_Redaction = tuple[frozenset[str], frozenset[str], frozenset[str]]


@dataclass(frozen=True, slots=True)
class _Block:
    """What one subtree yields, in document order; ``parts`` are its child subtrees."""

    nodes: tuple[Node, ...]
    texts: tuple[str, ...]
    tables: tuple[TableData, ...]
    parts: tuple[tuple[_Key, _Block], ...] = ()


@dataclass(slots=True)
class _Lines:
    """One snapshot's entry lines: depth, entry text, where each subtree's text starts/ends."""

    text: str
    depths: list[int] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)  # character offset of each entry line
    ends: list[int] = field(default_factory=list)  # the offset where its subtree ends
    after: list[int] = field(default_factory=list)  # the index of the entry after its subtree
    properties: list[bool] = field(default_factory=list)  # ``/url: ...`` lines
    top: list[int] = field(default_factory=list)

    def key(self, index: int, parent_path: tuple[str, ...]) -> _Key:
        return parent_path, self.text[self.starts[index] : self.ends[index]]

    def children(self, index: int) -> Iterator[int]:
        """The entries whose parent is ``index``: the first below it, then subtree by subtree."""
        child, last = index + 1, self.after[index]
        while child < last:
            yield child
            child = self.after[child]


def _scan(text: str) -> _Lines:
    """Entry lines and the tree they form, exactly as ``_parse_tree`` links them."""
    scan = _Lines(text)
    depths, entries, starts, ends = scan.depths, scan.entries, scan.starts, scan.ends
    after, properties = scan.after, scan.properties
    stack: list[int] = []  # indices of open (node) entries, by depth
    offset, size = 0, len(text)
    for line in text.split("\n"):  # Not splitlines(): U+2028 and friends are text here.
        start, offset = offset, offset + len(line) + 1
        entry = line.lstrip(" ")
        if entry[:2] != "- ":
            continue
        depth, index = len(line) - len(entry), len(entries)
        while stack and depths[stack[-1]] >= depth:
            closed = stack.pop()
            ends[closed], after[closed] = start, index
        if not stack:
            scan.top.append(index)
        is_property = entry[2:3] == "/" or (entry[2:4] == "'/" and _is_property(entry[2:]))
        depths.append(depth)
        entries.append(entry[2:])
        starts.append(start)
        ends.append(size)
        after.append(index + 1)  # a property, or an entry still open, for now
        properties.append(is_property)
        if not is_property:  # a property belongs to the entry above it; it has no children
            stack.append(index)
    for index in stack:
        after[index] = len(entries)
    return scan


class SnapshotReader:
    """Parses one tab's snapshots, reusing the unchanged subtrees of earlier ones."""

    def __init__(self) -> None:
        self._redaction: _Redaction | None = None
        self._memo: dict[_Key, _Block] = {}
        self._last: tuple[str, ParsedPage, tuple[tuple[_Key, _Block], ...]] | None = None

    def read(
        self,
        snapshot_text: str,
        *,
        secret_values: Collection[str] = (),
        sensitive_refs: Collection[str] = (),
        password_values: Collection[str] = (),
    ) -> ParsedPage:
        """The page ``build_observation`` would parse from ``snapshot_text``, redacted."""
        redaction = (
            frozenset(s for s in secret_values if s.strip()),
            frozenset(sensitive_refs),
            frozenset(p for p in password_values if p),
        )
        if redaction != self._redaction:
            self._redaction, self._memo, self._last = redaction, {}, None
        if self._last is not None and self._last[0] == snapshot_text:
            return self._last[1]  # the whole document is the one unchanged subtree
        page, top = _Parse(_scan(snapshot_text), self._memo, redaction).page()
        self._last = (snapshot_text, page, top)
        self._prune(top, len(page.nodes))
        return page

    def _prune(self, top: tuple[tuple[_Key, _Block], ...], nodes: int) -> None:
        """Keep the memo bounded: when it outgrows the page, keep the latest page's blocks."""
        if len(self._memo) <= _KEEP_BLOCKS * max(nodes, 256):
            return
        kept: dict[_Key, _Block] = {}
        stack = list(top)
        while stack:
            key, block = stack.pop()
            kept[key] = block
            stack.extend(block.parts)
        self._memo = kept


class _Parse:
    """One read: blocks looked up by key, and parsed (reusing their parts) when missing."""

    def __init__(self, lines: _Lines, memo: dict[_Key, _Block], redaction: _Redaction) -> None:
        self.lines, self.memo = lines, memo
        secrets, self.sensitive_refs, self.passwords = redaction
        self.scrub: Callable[[str], str] | None = _make_scrubber(secrets)
        self.redacts = bool(self.scrub or self.sensitive_refs or self.passwords)

    def page(self) -> tuple[ParsedPage, tuple[tuple[_Key, _Block], ...]]:
        lines = self.lines
        if max(lines.depths, default=0) > 2 * _MAX_REUSE_DEPTH:
            return self._whole(), ()
        parts = tuple(self._part(i, ()) for i in lines.top if not lines.properties[i])
        nodes = tuple(n for _, b in parts for n in b.nodes)
        text = "\n".join(t for _, b in parts for t in b.texts)
        tables = tuple(t for _, b in parts for t in b.tables)
        return ParsedPage(nodes, text, tables), parts

    def _whole(self) -> ParsedPage:
        raw = _parse_tree(self.lines.text)
        _redact_tree(raw, self.scrub, self.sensitive_refs, self.passwords)
        return ParsedPage(_flatten(raw), _visible_text(raw), _tables(raw))

    def _part(self, index: int, parent_path: tuple[str, ...]) -> tuple[_Key, _Block]:
        key = self.lines.key(index, parent_path)
        block = self.memo.get(key)
        if block is None:
            block = self.memo[key] = self._block(index, parent_path)
        return key, block

    def _block(self, index: int, parent_path: tuple[str, ...]) -> _Block:
        """Parse one entry and its properties; its child subtrees come from ``_part``."""
        lines = self.lines
        key, value = _split_entry(lines.entries[index])
        raw = _entry_node(key, value)
        subtrees = []
        for child in lines.children(index):
            if lines.properties[child]:
                name, property_value = _split_entry(lines.entries[child])
                _set_property(raw, name[1:], property_value)
            else:
                subtrees.append(child)
        if self.redacts:
            _redact_node(raw, self.scrub or _unchanged, self.sensitive_refs, self.passwords)
        structural = _is_structural(raw)
        path = parent_path if structural else (*parent_path, node_label(raw.role, raw.name))
        node, own = _to_node(raw, path), _own_text(raw, has_children=bool(subtrees))
        if not subtrees:  # most entries: nothing to concatenate
            return _Block((node,), own, self._own_table(raw, index))
        parts = tuple(self._part(child, path) for child in subtrees)
        nodes, texts, tables = [node], list(own), list(self._own_table(raw, index))
        for _, part in parts:
            nodes += part.nodes
            texts += part.texts
            tables += part.tables
        return _Block(tuple(nodes), tuple(texts), tuple(tables), parts)

    def _own_table(self, raw: _RawNode, index: int) -> tuple[TableData, ...]:
        """A table's data, from its subtree parsed in full (tables are few and small)."""
        if raw.role not in _TABLE_ROLES:
            return ()
        subtree = _parse_tree(self.lines.key(index, ())[1])
        _redact_tree(subtree, self.scrub, self.sensitive_refs, self.passwords)
        return (_table(subtree[0]),)


def _is_property(entry: str) -> bool:
    """``/url: ...`` (a property of the entry above), decided as ``_parse_tree`` decides it."""
    if entry.startswith("/"):
        return True
    return entry.startswith("'/") and _split_entry(entry)[0].startswith("/")


def _own_text(raw: _RawNode, *, has_children: bool) -> tuple[str, ...]:
    """The entry's own line of visible text, as ``_visible_text`` reads it (empty lines go)."""
    if raw.role == "text":
        line = raw.name
    elif raw.value:
        line = raw.value
    elif raw.name and not has_children:
        line = raw.name
    else:
        return ()
    return (line,) if line else ()
