"""The screen change compares only what can differ, and says what a full comparison says."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from northstar.monitor.observation import (
    MediaState,
    Node,
    Observation,
    ParsedPage,
    assemble_observation,
    build_observation,
)
from northstar.monitor.screen_change import ScreenChangeSettings, screen_change
from northstar.monitor.snapshot_reader import SnapshotReader
from tests.monitor.page_edits import Edit, Lines, apply_edits, line_edits, text_of

# Few distinct lines, so that pages repeat keys (equal paths, unnamed nodes with equal text).
LINES = [
    '- list "Items":',
    "- listitem: Draft A",
    "- listitem: Draft B",
    "- listitem",
    '- button "Delete"',
    '- button "Delete" [pressed]',
    '- textbox "Search": shoes',
    '- textbox "Search": boots',
    "- text: Total 42",
    "- generic:",
    '- link "Next":',
    "- /url: /next",
]
MEDIA = [MediaState(kind="image", name="logo", src="a.png", loaded=True)]

pages = st.lists(st.tuples(st.integers(0, 3), st.sampled_from(LINES)), max_size=25)
edits = line_edits(LINES, places=40, depths=3, most=4)


def _edited(lines: Lines, changes: list[Edit]) -> Lines:
    edited = list(lines)
    apply_edits(edited, changes)
    return edited


def _observation(page: ParsedPage, media: list[MediaState]) -> Observation:
    return assemble_observation(
        page, str, tab="t", url="u", title="", snapshot_id="s", frames=(), media=media
    )


# The comparison written the plain way: every entry of both pages, keyed by path, text of
# unnamed nodes and occurrence; changed, then added, then removed.
def _entry(item: Node | MediaState) -> tuple[tuple[str, ...], str, str, object]:
    if isinstance(item, Node):
        return (
            item.path,
            item.role,
            item.name,
            (item.value, item.states.labels(include_focus=False)),
        )
    states = tuple(
        f"{flag}={getattr(item, flag)}".lower()
        for flag in ("loaded", "paused", "ended", "muted")
        if getattr(item, flag) is not None
    )
    label = f'{item.kind} "{item.name}"' if item.name else item.kind
    return ("media", label), item.kind, item.name, (item.src or None, states)


def _keyed(observation: Observation) -> dict[object, tuple[tuple[str, ...], str, str, object]]:
    keyed: dict[object, tuple[tuple[str, ...], str, str, object]] = {}
    seen: dict[object, int] = {}
    items = [n for n in observation.nodes if not n.structural] + list(observation.media)
    for entry in map(_entry, items):
        base = (entry[0], entry[3][0] if not entry[2] else None)  # type: ignore[index]
        seen[base] = seen.get(base, 0) + 1
        keyed[(base, seen[base])] = entry
    return keyed


def _plain(
    before: Observation, after: Observation
) -> list[tuple[str, tuple[str, ...], object, object]]:
    old, new = _keyed(before), _keyed(after)
    changed = [
        ("changed", e[0], old[k][3], e[3]) for k, e in new.items() if k in old and old[k][3] != e[3]
    ]
    added = [("added", e[0], None, e[3]) for k, e in new.items() if k not in old]
    removed = [("removed", e[0], e[3], None) for k, e in old.items() if k not in new]
    return changed + added + removed


def _items(
    before: Observation, after: Observation
) -> list[tuple[str, tuple[str, ...], object, object]]:
    change = screen_change(before, after, ScreenChangeSettings(max_items=10_000))
    return [
        (
            i.change,
            i.path,
            None if i.before is None else (i.before.value, i.before.states),
            None if i.after is None else (i.after.value, i.after.states),
        )
        for i in (*change.changed, *change.added, *change.removed)
    ]


@settings(max_examples=400, deadline=None)
@given(lines=pages, changes=edits, media_before=st.booleans(), media_after=st.booleans())
def test_the_screen_change_equals_a_comparison_of_every_entry(
    lines: list[tuple[int, str]],
    changes: list[tuple[str, int, int, str]],
    media_before: bool,
    media_after: bool,
) -> None:
    edited = _edited(lines, changes)
    reader = SnapshotReader()  # shares the nodes of unchanged subtrees, as a capture does
    shared = (
        _observation(reader.read(text_of(lines)), MEDIA if media_before else []),
        _observation(reader.read(text_of(edited)), MEDIA if media_after else []),
    )
    separate = tuple(
        build_observation(
            tab="t", url="u", snapshot_text=text_of(x), snapshot_id="s", media=MEDIA if m else []
        )
        for x, m in ((lines, media_before), (edited, media_after))
    )
    expected = _plain(*separate)
    assert _items(*shared) == expected
    assert _items(*separate) == expected
