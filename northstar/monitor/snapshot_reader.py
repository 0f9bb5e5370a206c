"""Read successive snapshots of one tab, parsing only what changed since the previous one.

An agent observes the same tab again and again, and an action changes a few lines of a
snapshot of thousands. ``SnapshotReader`` gives the same ``ParsedPage`` as a full parse
(``build_observation``) but keeps what it parsed: a subtree (an entry and the lines below
it) yields the same nodes, visible text and tables whenever its text and the path of its
parent are the same, so those two are the key, and an unchanged subtree of a later snapshot
is taken as it is, its ``Node`` objects included (which lets the fingerprints and the
screen change skip what they already saw). Only entries whose subtree text changed (the
changed line and its ancestors) are parsed again. Even the lines are not all read again:
the entry lines of the previous snapshot are kept, and only the lines between the longest
common start and end of both texts are scanned (``_rescan``).

What a subtree yields depends on the redaction too (secrets, password fields), so the
reader forgets everything when those change. Snapshots nested deeper than
``_MAX_REUSE_DEPTH`` are parsed in full: the reuse walk recurses once per level.

The keys are raw snapshot text, secrets included, held in memory only to compare the next
snapshot with; what the reader returns is redacted. One reader per tab; not for concurrent
use (each ``read`` is synchronous).
"""

from __future__ import annotations

import bisect
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
    # Scanned from an earlier snapshot's lines (``_rescan``): where they differ, see ``_Kept``.
    spliced: tuple[int, int, int, int] | None = field(default=None, compare=False)

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
        ends.append(start + len(line) if is_property else size)  # a property: its own line
        after.append(index + 1)  # a property, or an entry still open, for now
        properties.append(is_property)
        if not is_property:  # a property belongs to the entry above it; it has no children
            stack.append(index)
    for index in stack:
        after[index] = len(entries)
    return scan


def _rescan(previous: _Lines, text: str) -> _Lines:
    """``_scan(text)``, scanning only the lines that differ from the ``previous`` snapshot's.

    The entries of the common first and last lines are the previous ones (those of the end
    shifted); the lines between are scanned, and only the entries whose subtree ends where
    the tree changed are linked again (the open ancestors and, in the common end, the
    subtrees hopped over one by one), so a change of one line costs a few list copies.
    """
    old = previous.text
    start = _common_start(old, text)
    first = text.rfind("\n", 0, start) + 1  # the offset of the first line that differs
    tail = text.find("\n", len(text) - _common_end(old, text, min(len(old), len(text)) - start))
    stop = len(text) + 1 if tail < 0 else tail + 1  # where the common last lines start
    delta = len(text) - len(old)
    i0 = bisect.bisect_left(previous.starts, first)
    j0 = bisect.bisect_left(previous.starts, stop - delta)
    middle = _scan(text[first : stop - 1])
    scan = _splice(previous, text, middle, first, (i0, j0, delta))
    _link(scan, _open_at(previous, i0), i0, len(middle.entries))
    end = i0 + len(middle.entries)
    scan.spliced = (i0, end, end - j0, first)
    return scan


def _common_start(old: str, new: str) -> int:
    """How many characters both strings start with (a binary search of C comparisons)."""
    low, high = 0, min(len(old), len(new))
    while low < high:
        middle = (low + high + 1) // 2
        if old.startswith(new[low:middle], low):
            low = middle
        else:
            high = middle - 1
    return low


def _common_end(old: str, new: str, limit: int) -> int:
    """How many characters (at most ``limit``) both strings end with."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if old.endswith(new[len(new) - middle : len(new) - low], 0, len(old) - low):
            low = middle
        else:
            high = middle - 1
    return low


def _splice(
    previous: _Lines, text: str, middle: _Lines, first: int, where: tuple[int, int, int]
) -> _Lines:
    """The previous entries before ``i0``, the middle's, and the previous from ``j0`` on."""
    i0, j0, delta = where
    shift = i0 + len(middle.entries) - j0
    scan = _Lines(text)
    scan.depths = previous.depths[:i0] + middle.depths + previous.depths[j0:]
    scan.entries = previous.entries[:i0] + middle.entries + previous.entries[j0:]
    scan.properties = previous.properties[:i0] + middle.properties + previous.properties[j0:]
    scan.starts = previous.starts[:i0] + [s + first for s in middle.starts]
    scan.starts += [s + delta for s in previous.starts[j0:]]
    scan.ends = previous.ends[:i0] + [e + first for e in middle.ends]
    scan.ends += [e + delta for e in previous.ends[j0:]]
    scan.after = previous.after[:i0] + [a + i0 for a in middle.after]
    scan.after += [a + shift for a in previous.after[j0:]]
    scan.top = [t for t in previous.top if t < i0]
    return scan


def _open_at(scan: _Lines, index: int) -> list[int]:
    """The entries still open when entry ``index`` is reached: ``_scan``'s stack there."""
    stack: list[int] = []
    entry = scan.top[0] if scan.top else index
    after, properties = scan.after, scan.properties
    while entry < index:
        if after[entry] >= index and not properties[entry]:
            stack.append(entry)
            entry += 1  # its first child
        else:
            entry = after[entry]  # its next sibling
    return stack


def _link(scan: _Lines, stack: list[int], i0: int, count: int) -> None:
    """Link the entries from ``i0`` as ``_scan`` would, given its ``stack`` there.

    The ``count`` middle entries are linked one by one; in the common end, each subtree
    keeps its own links, so the walk hops from one to the entry after it.
    """
    depths, starts, ends, after = scan.depths, scan.starts, scan.ends, scan.after
    entry, last = i0, len(scan.entries)
    while entry < last:
        depth = depths[entry]
        while stack and depths[stack[-1]] >= depth:
            closed = stack.pop()
            ends[closed], after[closed] = starts[entry], entry
        if not stack:
            scan.top.append(entry)
        if entry >= i0 + count:
            entry = after[entry]
            continue
        if not scan.properties[entry]:
            ends[entry], after[entry] = len(scan.text), entry + 1
            stack.append(entry)
        entry += 1
    for index in stack:
        ends[index], after[index] = len(scan.text), last


@dataclass(frozen=True, slots=True)
class _Kept:
    """The previous read, and where the new lines differ from its (``_Lines.spliced``).

    Entries before ``start`` are the previous ones; from ``end`` on, the previous ones
    ``shift`` places earlier; ``first`` is the offset of the first line that differs.
    """

    lines: _Lines
    placed: dict[int, tuple[_Key, _Block]]  # the part at each entry, as the read found it
    start: int
    end: int
    shift: int
    first: int


class SnapshotReader:
    """Parses one tab's snapshots, reusing the unchanged subtrees of earlier ones."""

    def __init__(self) -> None:
        self._redaction: _Redaction | None = None
        self._memo: dict[_Key, _Block] = {}
        self._last: tuple[_Lines, ParsedPage, _Parse] | None = None

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
        if self._last is None:
            lines = _scan(snapshot_text)
        elif self._last[0].text == snapshot_text:
            return self._last[1]  # the whole document is the one unchanged subtree
        else:
            lines = _rescan(self._last[0], snapshot_text)
        kept = None
        if self._last is not None and lines.spliced is not None:
            kept = _Kept(self._last[0], self._last[2].placed, *lines.spliced)
        parse = _Parse(lines, self._memo, redaction, kept)
        page, top = parse.page()
        parse.kept = None  # the next read keeps this one's places, not the one before
        self._last = (lines, page, parse)
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

    def __init__(
        self,
        lines: _Lines,
        memo: dict[_Key, _Block],
        redaction: _Redaction,
        kept: _Kept | None = None,
    ) -> None:
        self.lines, self.memo, self.kept = lines, memo, kept
        self.placed: dict[int, tuple[_Key, _Block]] = {}
        secrets, self.sensitive_refs, self.passwords = redaction
        self.scrub: Callable[[str], str] | None = _make_scrubber(secrets)
        self.redacts = bool(self.scrub or self.sensitive_refs or self.passwords)

    def page(self) -> tuple[ParsedPage, tuple[tuple[_Key, _Block], ...]]:
        lines = self.lines
        if max(lines.depths, default=0) > 2 * _MAX_REUSE_DEPTH:
            return self._whole(), ()
        parts = tuple(self._part(i, ()) for i in lines.top if not lines.properties[i])
        if len(parts) == 1:  # one root (most pages): its block holds the page already
            block = parts[0][1]
            return ParsedPage(block.nodes, "\n".join(block.texts), block.tables), parts
        nodes = tuple(n for _, b in parts for n in b.nodes)
        text = "\n".join(t for _, b in parts for t in b.texts)
        tables = tuple(t for _, b in parts for t in b.tables)
        return ParsedPage(nodes, text, tables), parts

    def _whole(self) -> ParsedPage:
        raw = _parse_tree(self.lines.text)
        _redact_tree(raw, self.scrub, self.sensitive_refs, self.passwords)
        return ParsedPage(_flatten(raw), _visible_text(raw), _tables(raw))

    def _part(self, index: int, parent_path: tuple[str, ...]) -> tuple[_Key, _Block]:
        placed = self._placed_before(index, parent_path)
        if placed is None:
            key = self.lines.key(index, parent_path)
            block = self.memo.get(key)
            if block is None:
                block = self.memo[key] = self._block(index, parent_path)
            placed = key, block
        self.placed[index] = placed
        return placed

    def _placed_before(
        self, index: int, parent_path: tuple[str, ...]
    ) -> tuple[_Key, _Block] | None:
        """The previous read's part at this entry, if its key is this one's.

        Its text is the same when the subtree lies in the common start (and ended at the
        same offset before) or in the common end; then only the parent's path can differ.
        Found by place, the key need not be cut from the text and hashed again.
        """
        kept = self.kept
        if kept is None or kept.start <= index < kept.end:
            return None
        if index < kept.start:
            ends = self.lines.ends[index]
            if ends > kept.first or kept.lines.ends[index] != ends:
                return None
            placed = kept.placed.get(index)
        else:
            placed = kept.placed.get(index - kept.shift)
        return placed if placed is not None and placed[0][0] == parent_path else None

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
