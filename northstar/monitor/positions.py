"""Where a tab's node tuple differs from its previous reading's, found by identity.

``SnapshotReader`` hands the nodes of an unchanged subtree to the next reading of a tab as
the very same objects, so a position that holds the same object holds the same node, and
what was derived from it (whether it is shown, its fingerprint keys) still holds. These
helpers find the few positions that differ at C speed (``map(operator.is_not, ...)``), so
the readers of a page of thousands of nodes redo their work for those positions alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, count, islice
from operator import is_not
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # observation imports this module; it needs no name from there at run time
    from northstar.monitor.observation import Node

__all__ = [
    "MAX_CHANGED",
    "changed_positions",
    "common_ends",
    "same_end",
    "same_start",
    "shown_nodes",
]

# More changed positions than this: splicing by position stops paying, the ends are used.
MAX_CHANGED = 64


def changed_positions(old: Sequence[object], new: Sequence[object]) -> list[int] | None:
    """The positions where ``new`` holds another object than ``old``, in order.

    ``None`` when the lengths differ or more than ``MAX_CHANGED`` positions differ.
    """
    if len(old) != len(new):
        return None
    found = list(islice(compress(count(), map(is_not, old, new)), MAX_CHANGED + 1))
    return found if len(found) <= MAX_CHANGED else None


def common_ends(old: Sequence[object], new: Sequence[object]) -> tuple[int, int]:
    """How many leading and trailing positions both hold the same objects; never overlapping."""
    start = same_start(old, new)
    return start, min(same_end(old, new), min(len(old), len(new)) - start)


def same_start(old: Sequence[object], new: Sequence[object]) -> int:
    """How many leading positions both hold the same objects."""
    return next(compress(count(), map(is_not, old, new)), min(len(old), len(new)))


def same_end(old: Sequence[object], new: Sequence[object]) -> int:
    """How many trailing positions both hold the same objects (may overlap the start's)."""
    ends = map(is_not, reversed(old), reversed(new))
    return next(compress(count(), ends), min(len(old), len(new)))


class _Shown(NamedTuple):
    """One reading's nodes, whether each is shown (not structural), and the shown ones."""

    nodes: tuple[Node, ...]
    flags: list[bool]  # never changed once made: later readings share it
    shown: tuple[Node, ...]


_NONE_SHOWN = _Shown((), [], ())
# The latest reading of each tab; bounded: cleared when full.
_LATEST_SHOWN: dict[str, _Shown] = {}
_TABS_HELD = 32


def shown_nodes(tab: str, nodes: tuple[Node, ...]) -> tuple[Node, ...]:
    """``nodes`` without the structural ones, as ``Node.structural`` decides.

    Taken from the tab's previous reading where it holds the same node objects.
    """
    reading = _shown_again(_LATEST_SHOWN.get(tab, _NONE_SHOWN), nodes)
    if reading is None:
        flags = [not node.structural for node in nodes]
        reading = _Shown(nodes, flags, tuple(compress(nodes, flags)))
    if len(_LATEST_SHOWN) >= _TABS_HELD and tab not in _LATEST_SHOWN:
        _LATEST_SHOWN.clear()
    _LATEST_SHOWN[tab] = reading
    return reading.shown


def _shown_again(previous: _Shown, nodes: tuple[Node, ...]) -> _Shown | None:
    """The previous reading with its changed positions replaced, if none changed kind."""
    changed = changed_positions(previous.nodes, nodes)
    flags = previous.flags
    if changed is None or any(flags[i] == nodes[i].structural for i in changed):
        return None
    shown, place, last = list(previous.shown), 0, 0
    for index in changed:
        place, last = place + sum(flags[last:index]), index  # shown nodes before ``index``
        if flags[index]:
            shown[place] = nodes[index]
    return _Shown(nodes, flags, tuple(shown))
