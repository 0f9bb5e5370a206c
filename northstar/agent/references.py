"""Which references an agent may act on, and whether it is shown the whole page or changes.

A reference (``e12``) names an element of one observation. It acts only while it is in
the tab's latest observation and that observation is current (no action on the tab has
failed since without a new look). Anything else is ``STALE_REFERENCE``, naming what the
reference used to be (its role and name), so the agent knows what to look for again. The
adapter checks once more, right before acting, that the element is still on the page.

Decisions only: the driver (``northstar.agent.host``) keeps one ``TabView`` per tab.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from dataclasses import dataclass, field

from northstar.errors import StaleReference
from northstar.monitor.observation import ElementRef, Node, Observation, node_label
from northstar.monitor.positions import changed_positions

__all__ = ["TabView", "resolve", "shows_whole_page"]

# Enough for the references of many large pages; the oldest labels are forgotten first.
_REMEMBERED_LABELS = 5_000


@dataclass
class TabView:
    """What the agent was shown of one tab: its latest observation and earlier labels."""

    tab: str
    latest: Observation | None = None
    current: bool = False
    labels: OrderedDict[str, str] = field(default_factory=OrderedDict)
    # The latest look's references in page order, and whether none repeats: the newest
    # labels, in this order, unless the look had more than the labels remembered.
    _refs: list[str] = field(default_factory=list, repr=False)
    _refs_unique: bool = field(default=False, repr=False)

    def saw(self, observation: Observation) -> None:
        """``observation`` is now the tab's latest, and the one its references act on."""
        previous, self.latest, self.current = self.latest, observation, True
        if previous is not None and _same_nodes(previous, observation):
            return  # its references are the newest labels already, in this order
        if previous is not None and self._refs_unique and _relabeled(previous, observation, self):
            return
        refs = [n.ref for n in observation.nodes if n.ref is not None]
        if previous is not None and self._refs_unique and refs == self._refs:
            _relabel(self.labels, previous, observation)  # same order: only labels can differ
            return
        for node in observation.nodes:
            if node.ref is not None:
                self.labels[node.ref] = node_label(node.role, node.name)
                self.labels.move_to_end(node.ref)
        while len(self.labels) > _REMEMBERED_LABELS:
            self.labels.popitem(last=False)
        unique = len(refs) <= _REMEMBERED_LABELS and len(set(refs)) == len(refs)
        self._refs, self._refs_unique = refs, unique

    def label(self, ref: str) -> str | None:
        """What ``ref`` named when the agent last saw it, or ``None`` if it never did."""
        return self.labels.get(ref)


def _relabeled(previous: Observation, latest: Observation, view: TabView) -> bool:
    """Relabel a look whose few changed positions hold the references they held before.

    The other positions hold the same nodes (``SnapshotReader``), so the references are
    the previous look's, in the same order: only the changed nodes' labels can differ.
    Whether it applied; when not, the caller compares the whole list of references.
    """
    before, after = previous.nodes, latest.nodes
    changed = changed_positions(before, after)
    if changed is None or any(before[i].ref != after[i].ref for i in changed):
        return False
    for index in changed:
        node = after[index]
        if node.ref is not None:
            view.labels[node.ref] = node_label(node.role, node.name)
    return True


def _relabel(labels: dict[str, str], previous: Observation, latest: Observation) -> None:
    """The labels of ``latest``'s nodes that are not ``previous``'s at the same place.

    For a look with the references of the one before, in the same order, each once: a node
    kept (``SnapshotReader``) has its label already, and no reference moves.
    """
    before = previous.nodes
    for index, node in enumerate(latest.nodes):
        if node.ref is not None and (index >= len(before) or before[index] is not node):
            labels[node.ref] = node_label(node.role, node.name)


def _same_nodes(previous: Observation, latest: Observation) -> bool:
    """Whether both hold the very same nodes (an unchanged page: ``SnapshotReader``)."""
    before, after = previous.nodes, latest.nodes
    return len(before) == len(after) and all(map(operator.is_, before, after))


def resolve(view: TabView, ref: str) -> tuple[ElementRef, Node]:
    """The element ``ref`` names now, or ``StaleReference`` naming what it was."""
    latest = view.latest
    was = view.label(ref)
    named = f"reference {ref!r}" + (f" ({was})" if was else "")
    if latest is None:
        raise StaleReference(
            f"tab {view.tab!r} was not observed yet: observe it first", tab=view.tab
        )
    if not view.current:
        raise StaleReference(
            f"{named} is from an observation that is no longer current: an action on tab "
            f"{view.tab!r} failed after it was sent, so the page may have changed",
            tab=view.tab,
        )
    node = latest.node_for_ref(ref)
    if node is None:
        why = "the element is gone or the page changed" if was else "no observation showed it"
        raise StaleReference(
            f"{named} is not in the latest observation of tab {view.tab!r}: {why}", tab=view.tab
        )
    return latest.reference(ref), node


def shows_whole_page(previous: Observation | None, latest: Observation, *, full: bool) -> bool:
    """Whether an answer holds the whole page rather than what changed since ``previous``.

    Asked for, the first look at a tab, another URL, or a new document: when no reference
    of the previous look is in the new one, the agent holds no reference that still works.
    """
    if full or previous is None or previous.url != latest.url:
        return True
    pairs = zip(previous.nodes, latest.nodes, strict=False)  # the pages may differ in length
    if any(a is b and a.ref is not None for a, b in pairs):
        return False  # a node both looks share (``SnapshotReader``) holds a reference of both
    before = {n.ref for n in previous.nodes if n.ref is not None}
    return not any(n.ref in before for n in latest.nodes if n.ref is not None)
