"""Observation keys are equal exactly when what they cover is equal (checked the plain way)."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from northstar.monitor.fingerprints import digest_observation
from northstar.monitor.observation import (
    CONTROL_ROLES,
    EDITABLE_ROLES,
    MediaState,
    Observation,
    assemble_observation,
    build_observation,
)
from northstar.monitor.snapshot_reader import SnapshotReader

# Groups of lines that differ a little: an edit swaps a line for another of its group.
GROUPS = [
    [
        '- button "Menu"',
        '- button "Menu" [expanded]',
        '- button "Menu" [active]',
        '- button "Menu 2"',
    ],
    ['- textbox "Search": shoes', '- textbox "Search": boots 10:31', '- textbox "Search": 7'],
    ["- text: Opened 3 times", "- text: Opened 4 times", "- text: Opened many times"],
    ["- text: Updated 10:31:02", "- text: Updated 10:32:07", "- text: Updated 2026-12-03 10:31"],
    ['- link "Page 2":', '- link "Page 3":', '- link "Page 2" [active]:'],
    ["- /url: /items?page=2", "- /url: /items?page=3", "- /placeholder: Find"],
    ['- table "Orders":', '- table "Orders 2":'],
    ["- row:", "- generic:"],
    ['- cell "7"', '- cell "8"', "- cell: 7"],
    ['- list "Items":', '- list "Items" [ref=e9]:'],
    ["- listitem: Draft 1", "- listitem: Draft 2", "- listitem: Draft A"],
]
lines = st.tuples(st.integers(0, 3), st.integers(0, len(GROUPS) - 1), st.integers(0, 3))
pages = st.lists(lines, max_size=12)
media = st.sampled_from(
    [
        (),
        (MediaState(kind="video", name="clip", src="a.mp4", paused=False, current_time=3.2),),
        (MediaState(kind="video", name="clip", src="a.mp4", paused=False, current_time=9.9),),
        (MediaState(kind="video", name="clip", src="a.mp4", paused=True, current_time=9.9),),
    ]
)
urls = st.sampled_from(["http://site.test/a", "http://site.test/b"])
CLOCK = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?\b"
)


def _observe(
    lines: list[tuple[int, int, int]], url: str, items: tuple[MediaState, ...]
) -> Observation:
    text = "\n".join(
        "  " * depth + GROUPS[group][variant % len(GROUPS[group])]
        for depth, group, variant in lines
    )
    return build_observation(tab="t", url=url, snapshot_text=text, snapshot_id="s", media=items)


# What each key covers, written out as lists (the way the keys were first computed).
def _coarse(text: str | None) -> str | None:
    return None if text is None else CLOCK.sub("<time>", text)


def _numbers(text: str | None) -> str | None:
    return None if text is None else re.sub(r"\d+(?:[.,]\d+)*", "<n>", text)


def _at(item: MediaState) -> int | None:
    return None if item.current_time is None else round(item.current_time)


def _covered(o: Observation) -> dict[str, Any]:
    nodes = [n for n in o.nodes if not n.structural]
    states = [n.states.labels(include_focus=False) for n in nodes]
    coarse: list[list[Any]] = [
        [
            len(n.path),
            n.role,
            _coarse(n.name),
            None if n.role in EDITABLE_ROLES else _coarse(n.value),
            s,
        ]
        for n, s in zip(nodes, states, strict=True)
    ]
    cycle = [
        c if n.role in CONTROL_ROLES else [c[0], c[1], _numbers(c[2]), _numbers(c[3]), c[4]]
        for n, c in zip(nodes, coarse, strict=True)
    ]
    media_coarse = [[m.kind, m.name, m.src, m.paused, m.muted] for m in o.media]
    return {
        "fingerprint": [
            o.tab,
            o.url,
            o.title,
            [[f.index, f.parent, f.name, f.url] for f in o.frames],
            [
                [len(n.path), n.role, n.name, n.value, n.url, s]
                for n, s in zip(nodes, states, strict=True)
            ],
            [[t.name, t.headers, t.rows] for t in o.tables],
            [
                [m.kind, m.name, m.src, m.loaded, m.paused, m.ended, m.muted, _at(m)]
                for m in o.media
            ],
        ],
        "state_key": [o.tab, o.url, coarse, media_coarse],
        "cycle_key": [o.tab, o.url, cycle, media_coarse],
        "controls_key": [
            o.tab,
            o.url,
            [c for n, c in zip(nodes, coarse, strict=True) if n.role in CONTROL_ROLES],
        ],
    }


def _keys(o: Observation) -> dict[str, str]:
    digest = digest_observation(o)
    return {
        k: getattr(digest, k) for k in ("fingerprint", "state_key", "cycle_key", "controls_key")
    }


edits = st.lists(st.tuples(st.integers(0, 20), st.integers(0, 3)), max_size=2)


def _edited(
    lines: list[tuple[int, int, int]], changes: list[tuple[int, int]]
) -> list[tuple[int, int, int]]:
    """``lines`` with a few lines swapped for others of their group: pages that differ a little."""
    lines = list(lines)
    for where, variant in changes:
        if lines:
            depth, group, _ = lines[where % len(lines)]
            lines[where % len(lines)] = (depth, group, variant)
    return lines


@settings(max_examples=500, deadline=None)
@given(a=pages, changes=edits, url_a=urls, url_b=urls, media_a=media, media_b=media)
def test_each_key_is_equal_exactly_when_what_it_covers_is_equal(
    a: list[tuple[int, int, int]],
    changes: list[tuple[int, int]],
    url_a: str,
    url_b: str,
    media_a: tuple[MediaState, ...],
    media_b: tuple[MediaState, ...],
) -> None:
    first, second = _observe(a, url_a, media_a), _observe(_edited(a, changes), url_b, media_b)
    covered_first, covered_second = _covered(first), _covered(second)
    keys_first, keys_second = _keys(first), _keys(second)
    for name in keys_first:
        same = covered_first[name] == covered_second[name]
        assert (keys_first[name] == keys_second[name]) is same, name


def test_nodes_shared_between_observations_give_the_keys_of_a_fresh_parse() -> None:
    text = '- list "Items":\n  - listitem: Draft 1\n  - button "Menu"'
    reader = SnapshotReader()
    reader.read(text)
    changed = text.replace("Draft 1", "Draft 2")
    shared = assemble_observation(
        reader.read(changed), str, tab="t", url="u", title="", snapshot_id="s", frames=(), media=()
    )
    fresh = build_observation(tab="t", url="u", snapshot_text=changed, snapshot_id="s")
    assert _keys(shared) == _keys(fresh)
