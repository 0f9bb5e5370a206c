"""What changed names each added or changed element by the same reference as before.

``render_changes`` looks up references only on the paths of the items it shows; these
tests hold it to the answer of a lookup over every node of the page, on random edits.
"""

from __future__ import annotations

from collections import defaultdict, deque

from hypothesis import given, settings
from hypothesis import strategies as st

from northstar.monitor.observation import Observation, build_observation, node_label
from northstar.monitor.rendering import _item_line, render_changes
from northstar.monitor.screen_change import ScreenChange, ScreenChangeSettings, screen_change

# Repeated names, unnamed entries with equal text and nesting: places shared by several nodes.
LINES = [
    '- list "Items" [ref=e{}]:',
    "- listitem [ref=e{}]: Draft",
    "- listitem [ref=e{}]: Sent",
    '- button "Delete" [ref=e{}]',
    '- button "Delete" [pressed] [ref=e{}]',
    '- textbox "Search" [ref=e{}]: shoes',
    '- textbox "Search" [ref=e{}]',
    "- generic [ref=e{}]:",
    "- text: Total 42",
    '- link "Next" [ref=e{}]',
]

pages = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(LINES)), max_size=25)


def _observation(lines: list[tuple[int, str]], first_ref: int) -> Observation:
    text = "\n".join(
        "  " * depth + line.format(first_ref + i) for i, (depth, line) in enumerate(lines)
    )
    return build_observation(tab="t", url="u", snapshot_text=text, snapshot_id="s")


def _every_place_lines(change: ScreenChange, after: Observation) -> list[str]:
    """The item lines with references looked up over every node (the reference answer)."""
    places: dict[object, deque[str]] = defaultdict(deque)
    for node in after.nodes:
        if node.ref is not None and not node.structural:
            places[(node.path, None if node.name else node.value)].append(node.ref)
    lines = []
    for item in (*change.changed, *change.added, *change.removed):
        value = (item.after.value if item.after else None) if not item.name else None
        refs = places.get((item.path, value))
        ref = refs.popleft() if refs and item.change != "removed" else None
        lines.append(_item_line(item, ref))
    return lines


@settings(max_examples=300, deadline=None)
@given(before=pages, after=pages, limit=st.integers(1, 8), offset=st.integers(0, 30))
def test_references_of_changed_and_added_items_equal_a_lookup_over_every_node(
    before: list[tuple[int, str]],
    after: list[tuple[int, str]],
    limit: int,
    offset: int,
) -> None:
    old, new = _observation(before, 1), _observation(after, 1 + offset)
    change = screen_change(old, new, ScreenChangeSettings(max_items=limit))
    text = render_changes(change, new)
    if change.is_empty:
        return
    shown = text.splitlines()[2 : 2 + len(change.changed + change.added + change.removed)]
    assert shown == _every_place_lines(change, new)


def test_a_changed_button_among_many_is_named_by_its_own_reference() -> None:
    page = [(0, '- button "Button {}" [ref=e{}]'.replace("{}", str(i), 1)) for i in range(50)]
    old = _observation(page, 1)
    page[30] = (0, '- button "Button 30" [pressed] [ref=e{}]')
    new = _observation(page, 1)
    text = render_changes(screen_change(old, new), new)
    assert (
        text.splitlines()[-1]
        == f"~ {node_label('button', 'Button 30')} [ref=e31]: [pressed] (was -)"
    )
