"""Screen changes: what appeared, disappeared and changed between two readings of a tab.

A screen change tells an agent what its last action did without sending the whole page
again. Nodes are matched by their path of ``role "name"`` labels (plus the text of unnamed
nodes, so a list that gained an entry shows one added item rather than every entry
"changed"); a named node whose value or states differ is "changed". Media elements are
compared the same way. Nothing in a screen change can be acted on: it holds labels, values
and states, never element references; the agent acts on the current observation.

The summary is bounded by ``ScreenChangeSettings.max_items``; ``left_off`` says how many
items did not fit. Changed items come first, then added, then removed, each in page order.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from northstar.monitor.observation import (
    NO_STATES,
    MediaState,
    Node,
    NodeStates,
    Observation,
    node_label,
)
from northstar.monitor.positions import same_end, same_start

__all__ = ["NodeView", "ScreenChange", "ScreenChangeItem", "ScreenChangeSettings", "screen_change"]

_NodeKey = tuple[tuple[str, ...], str | None, int]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScreenChangeSettings(_Frozen):
    """How much a screen change may hold."""

    max_items: int = Field(40, ge=1, le=10_000)


class NodeView(_Frozen):
    """What a node showed: its value and states, without anything to act on."""

    value: str | None = None
    states: tuple[str, ...] = ()


class ScreenChangeItem(_Frozen):
    """One added, removed or changed node (or media element), by its path."""

    change: Literal["added", "removed", "changed"]
    path: tuple[str, ...]
    role: str
    name: str
    before: NodeView | None = None
    after: NodeView | None = None


class ScreenChange(_Frozen):
    """The difference between two observations of one tab (see the module docstring)."""

    tab: str
    url_before: str
    url_after: str
    added: tuple[ScreenChangeItem, ...] = ()
    removed: tuple[ScreenChangeItem, ...] = ()
    changed: tuple[ScreenChangeItem, ...] = ()
    left_off: int = 0

    @property
    def is_empty(self) -> bool:
        """True when nothing on the tab differs, URL included."""
        nothing = not (self.added or self.removed or self.changed or self.left_off)
        return nothing and self.url_before == self.url_after


# What a node showed, as ``NodeView`` holds it: (value, states). Plain tuples while comparing
# thousands of nodes; a ``NodeView`` is built only for the items a screen change keeps.
_View = tuple[str | None, tuple[str, ...]]


class _Entry(NamedTuple):
    """A comparable node or media element; internal, never leaves this module.

    A named tuple rather than a frozen dataclass: it is built for every node of both
    observations, and a tuple is built several times faster.
    """

    path: tuple[str, ...]
    role: str
    name: str
    view: _View


def _node_entry(node: Node) -> _Entry:
    return _Entry(node.path, node.role, node.name, (node.value, _state_words(node.states)))


def _state_words(states: NodeStates) -> tuple[str, ...]:
    """A node's states without focus; most nodes share ``NO_STATES`` and skip the cache."""
    return () if states is NO_STATES else _cached_state_words(states)


@functools.lru_cache(maxsize=512)
def _cached_state_words(states: NodeStates) -> tuple[str, ...]:
    return states.labels(include_focus=False)


def _media_entry(item: MediaState) -> _Entry:
    states = tuple(
        f"{flag}={getattr(item, flag)}".lower()
        for flag in ("loaded", "paused", "ended", "muted")
        if getattr(item, flag) is not None
    )
    label = node_label(item.kind, item.name)
    return _Entry(("media", label), item.kind, item.name, (item.src or None, states))


_Source = Node | MediaState


def _sources(observation: Observation) -> list[_Source]:
    """What is compared, in page order: the meaningful nodes, then the media."""
    return [*observation.meaningful_nodes, *observation.media]


def _entry(source: _Source) -> _Entry:
    return _node_entry(source) if isinstance(source, Node) else _media_entry(source)


def _base(entry: _Entry) -> tuple[tuple[str, ...], str | None]:
    return entry.path, entry.view[0] if not entry.name else None


def _middles(old: list[_Source], new: list[_Source]) -> tuple[list[_Source], list[_Source]]:
    """The parts of both pages that can differ: without the common start and, when safe, end.

    Entries are matched by key and occurrence (``_keyed``). A common start shifts the
    occurrences of both sides alike, so it never matters. A common end matters only if the
    middles hold a different number of some key that the end holds too; then it is kept.
    Nodes of an unchanged subtree are the same objects (``SnapshotReader``), so ``is`` is
    usually enough to tell them equal.
    """
    shortest = min(len(old), len(new))
    start = same_start(old, new)  # the same objects, skipped at C speed; then equal ones
    while start < shortest and (old[start] is new[start] or old[start] == new[start]):
        start += 1
    end = min(same_end(old, new), shortest - start)
    while end < shortest - start and (
        old[-1 - end] is new[-1 - end] or old[-1 - end] == new[-1 - end]
    ):
        end += 1
    old_middle, new_middle = old[start : len(old) - end], new[start : len(new) - end]
    if end and _end_shifts(old_middle, new_middle, new[len(new) - end :]):
        return old[start:], new[start:]
    return old_middle, new_middle


def _end_shifts(old_middle: list[_Source], new_middle: list[_Source], end: list[_Source]) -> bool:
    """Whether the common end's occurrences differ between the pages (see ``_middles``)."""
    counts: dict[tuple[tuple[str, ...], str | None], int] = {}
    for source in old_middle:
        base = _base(_entry(source))
        counts[base] = counts.get(base, 0) - 1
    for source in new_middle:
        base = _base(_entry(source))
        counts[base] = counts.get(base, 0) + 1
    shifted = {base for base, count in counts.items() if count}
    return bool(shifted) and any(_base(_entry(source)) in shifted for source in end)


def _keyed(entries: Iterable[_Entry]) -> dict[_NodeKey, _Entry]:
    """Entries by path, the text of unnamed nodes, and occurrence among equal keys."""
    keyed: dict[_NodeKey, _Entry] = {}
    occurrences: dict[tuple[tuple[str, ...], str | None], int] = {}
    for entry in entries:
        base = _base(entry)
        count = occurrences.get(base, 0)
        occurrences[base] = count + 1
        keyed[(*base, count)] = entry
    return keyed


_Change = Literal["added", "removed", "changed"]
_Difference = tuple[_Change, _Entry, _View | None, _View | None]


def _differences(old: dict[_NodeKey, _Entry], new: dict[_NodeKey, _Entry]) -> list[_Difference]:
    """Changed, then added, then removed; each in page order."""
    changed: list[_Difference] = [
        ("changed", entry, old[key].view, entry.view)
        for key, entry in new.items()
        if key in old and old[key].view != entry.view
    ]
    added: list[_Difference] = [
        ("added", entry, None, entry.view) for key, entry in new.items() if key not in old
    ]
    removed: list[_Difference] = [
        ("removed", entry, entry.view, None) for key, entry in old.items() if key not in new
    ]
    return changed + added + removed


def _node_view(view: _View | None) -> NodeView | None:
    return None if view is None else NodeView(value=view[0], states=view[1])


def _item(difference: _Difference) -> ScreenChangeItem:
    change, entry, before, after = difference
    return ScreenChangeItem(
        change=change,
        path=entry.path,
        role=entry.role,
        name=entry.name,
        before=_node_view(before),
        after=_node_view(after),
    )


def screen_change(
    before: Observation, after: Observation, settings: ScreenChangeSettings | None = None
) -> ScreenChange:
    """What changed on one tab from ``before`` to ``after``, bounded in size.

    Raises ``ValueError`` when the observations are of different tabs: a difference between
    two tabs means nothing.
    """
    if before.tab != after.tab:
        raise ValueError(f"a screen change compares one tab; got {before.tab!r} and {after.tab!r}")
    limit = (settings or ScreenChangeSettings()).max_items
    old, new = _middles(_sources(before), _sources(after))
    differences = _differences(_keyed(map(_entry, old)), _keyed(map(_entry, new)))
    kept = [_item(d) for d in differences[:limit]]
    return ScreenChange(
        tab=after.tab,
        url_before=before.url,
        url_after=after.url,
        added=tuple(i for i in kept if i.change == "added"),
        removed=tuple(i for i in kept if i.change == "removed"),
        changed=tuple(i for i in kept if i.change == "changed"),
        left_off=len(differences) - len(kept),
    )
