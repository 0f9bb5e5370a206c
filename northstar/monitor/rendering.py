"""Compact text of an observation for a model: the whole page, or what changed.

Used by the agent sessions (``northstar.agent``) and by a failing run's diagnosis
(``northstar.run.diagnosis``), so both show a page the same way.

The whole page is one line per meaningful node, indented by its depth, in the form
playwright-mcp made familiar: ``- button "Menu" [expanded] [ref=e12]: value``. Nodes that
only group others (an unnamed ``generic``) are left out; their children move up.

What changed is ``northstar.monitor.screen_change`` in the same form, one line per item
(``+`` added, ``-`` removed, ``~`` changed), with the current reference of each added or
changed element so the agent can act on it without asking for the whole page. Removed
items have no reference: there is nothing left to act on.

Secrets never reach this module: observations are redacted when they are captured.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Collection, Iterator

from northstar.monitor.observation import (
    CONTROL_ROLES,
    NAMED_BY_CONTENT,
    Node,
    Observation,
    content_text,
    node_label,
)
from northstar.monitor.screen_change import NodeView, ScreenChange, ScreenChangeItem

__all__ = ["render_change_lines", "render_changes", "render_page"]

_VALUE_LIMIT = 200
# Roles a model reads and never acts on (text, landmarks, groups): the whole page shows
# no reference for them, about a tenth of its characters; a check or a target by role
# and name still reaches them, and a change's lines keep every reference.
_READ_ONLY_ROLES = frozenset(
    {
        "paragraph",
        "term",
        "definition",
        "list",
        "status",
        "alert",
        "log",
        "note",
        "main",
        "banner",
        "contentinfo",
        "navigation",
        "complementary",
        "region",
        "form",
        "group",
        "emphasis",
        "strong",
        "blockquote",
        "caption",
        "separator",
        "time",
    }
)


def _value(text: str | None) -> str:
    if not text:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= _VALUE_LIMIT else flat[: _VALUE_LIMIT - 1] + "…"


def _node_line(node: Node, derived: str = "") -> str:
    if node.role == "text":
        return f"text: {_value(node.name)}"
    words = [node_label(node.role, node.name or derived)]
    if derived and not node.name:
        words.append("(from text)")
    words += [f"[{state}]" for state in node.states.labels(include_focus=False)]
    if node.ref is not None and node.role not in _READ_ONLY_ROLES:
        words.append(f"[ref={node.ref}]")
    value = _value(node.value)
    return " ".join(words) + (f": {value}" if value else "")


def _derived_name(nodes: tuple[Node, ...], index: int) -> str:
    """A nameless button's or link's text (its child's name): shown, marked as derived,
    so "Publish" and "Save draft" differ in the page's text as they do on screen."""
    node = nodes[index]
    if node.name or node.role not in NAMED_BY_CONTENT:
        return ""
    return content_text(nodes, index)


def _page_lines(shown: tuple[Node, ...]) -> list[str]:
    """One line per node, indented under the nodes shown above it; a paragraph that only
    holds others and a label's text next to the control it names are left out (the
    control's line says it): each costs a model's context and tells it nothing."""
    lines: list[str] = []
    above: list[tuple[int, bool]] = []  # the open ancestors: depth of path, shown
    for index, node in enumerate(shown):
        while above and above[-1][0] >= len(node.path):
            above.pop()
        kept = not _says_nothing(shown, index)
        if kept:
            indent = "  " * sum(1 for _, was_shown in above if was_shown)
            lines.append(f"{indent}- {_node_line(node, _derived_name(shown, index))}")
        above.append((len(node.path), kept))
    return lines


def _says_nothing(shown: tuple[Node, ...], index: int) -> bool:
    """A wrapper paragraph (no name, no text of its own), or a text that is the name of
    the control beside it (its label)."""
    node = shown[index]
    if node.role == "paragraph":
        return not node.name and not node.value
    if node.role != "text" or not node.name:
        return False
    siblings = (shown[i] for i in (index - 1, index + 1) if 0 <= i < len(shown))
    return any(
        s.path[:-1] == node.path[:-1] and s.role in CONTROL_ROLES and s.name == node.name
        for s in siblings
    )


def _header(observation: Observation) -> str:
    title = f"{observation.title} " if observation.title else ""
    return f'tab "{observation.tab}": {title}<{observation.url}>'


def render_page(observation: Observation, *, max_lines: int = 600) -> str:
    """The whole page, one node per line, at most ``max_lines`` of them."""
    lines = [_header(observation)]
    shown = observation.meaningful_nodes
    lines += _page_lines(shown[:max_lines])
    if len(shown) > max_lines:
        lines.append(f"(and {len(shown) - max_lines} more lines: the page is long)")
    return "\n".join(lines)


_Place = tuple[tuple[str, ...], str | None]


def _refs_by_place(
    observation: Observation, paths: Collection[tuple[str, ...]]
) -> dict[_Place, deque[str]]:
    """The references of the elements on ``paths``, by path (and text, when unnamed).

    In page order. Only the items' paths are asked for: a change is a few items on a page
    of thousands of nodes, and a path that no item has is never looked up.
    """
    places: dict[_Place, deque[str]] = defaultdict(deque)
    for node in observation.nodes:
        if node.ref is not None and node.path in paths and not node.structural:
            places[(node.path, None if node.name else node.value)].append(node.ref)
    return places


def _view(view: NodeView | None) -> str:
    if view is None:
        return ""
    states = " ".join(f"[{s}]" for s in view.states)
    value = _value(view.value)
    return " ".join(part for part in (states, f'"{value}"' if value else "") if part) or "-"


def _item_line(item: ScreenChangeItem, ref: str | None) -> str:
    label = node_label(item.role, item.name)
    reference = f" [ref={ref}]" if ref else ""
    if item.change == "changed":
        return f"~ {label}{reference}: {_view(item.after)} (was {_view(item.before)})"
    view = item.after if item.change == "added" else item.before
    shown = _view(view)
    sign = "+" if item.change == "added" else "-"
    return f"{sign} {label}{reference}" + (f": {shown}" if shown not in ("", "-") else "")


def _item_lines(change: ScreenChange, after: Observation) -> Iterator[str]:
    places = _refs_by_place(after, {item.path for item in (*change.changed, *change.added)})
    for item in (*change.changed, *change.added, *change.removed):
        refs = places.get((item.path, None if item.name else (item.after or NodeView()).value))
        ref = refs.popleft() if refs and item.change != "removed" else None
        yield _item_line(item, ref)


def render_changes(
    change: ScreenChange, after: Observation, *, since: str = "the last observation"
) -> str:
    """What changed on the tab ``since`` a previous observation, with current references."""
    counts = f"{len(change.changed)} changed, {len(change.added)} added"
    counts += f", {len(change.removed)} removed"
    if change.is_empty:
        return f"{_header(after)}\nno change since {since}"
    head = f"{_header(after)}\nchanges since {since} ({counts}):"
    return "\n".join([head, *render_change_lines(change, after)])


def render_change_lines(change: ScreenChange, after: Observation) -> list[str]:
    """The change's lines alone, no header: what an action's answer shows when the tab is
    still at the URL and title its last look showed (the agent has them already)."""
    lines = list(_item_lines(change, after))
    if change.left_off:
        lines.append(f"(and {change.left_off} more: observe with full=true for the whole page)")
    return lines
