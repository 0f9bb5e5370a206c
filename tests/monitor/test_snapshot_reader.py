"""The incremental snapshot reader gives exactly what a full parse gives, on any sequence."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from northstar.monitor.observation import ParsedPage, build_observation
from northstar.monitor.snapshot_reader import SnapshotReader, _Lines, _rescan, _scan
from tests.monitor.page_edits import apply_edits, line_edits, text_of

# Lines that exercise every part of the parser: paths (named, unnamed, structural), values,
# states, properties (also quoted), text, tables, repeats, and lines that are not entries.
LINES = [
    "- generic [ref=e1]:",
    "- generic:",
    '- list "Items" [ref=e2]:',
    "- listitem [ref=e3]: Item 1",
    "- listitem: Item 2",
    '- link "Next" [ref=e4] [cursor=pointer]:',
    '- /url: "/items?page=2"',
    "- '/placeholder': Search",
    '- textbox "Search" [ref=e5]: s3cr3t',
    '- textbox "Password" [ref=e6]: hunter2',
    '- button "Menu" [expanded] [ref=e7]',
    '- checkbox "Only open" [checked] [ref=e8]',
    "- text: Total 42",
    "- text: s3cr3t inside",
    '- table "Orders" [ref=e9]:',
    "- row:",
    '- columnheader "Id"',
    '- cell "7"',
    "- cell: loose",
    '- heading "Orders" [level=2] [ref=e10]',
    "- paragraph: Updated 10:31",
    "not an entry line",
    "",
]

lines_strategy = st.lists(
    st.tuples(st.integers(0, 4), st.sampled_from(LINES)), min_size=0, max_size=40
)


def _full(text: str, **redaction: list[str]) -> ParsedPage:
    observation = build_observation(
        tab="t",
        url="u",
        snapshot_text=text,
        snapshot_id="s",
        secret_values=redaction.get("secret_values", ()),
        sensitive_refs=redaction.get("sensitive_refs", ()),
        password_values=redaction.get("password_values", ()),
    )
    return ParsedPage(observation.nodes, observation.text, observation.tables)


redactions = st.sampled_from(
    [
        {},
        {"secret_values": ["s3cr3t"]},
        {"sensitive_refs": ["e6"]},
        {"password_values": ["hunter2"]},
    ]
)


@settings(max_examples=300, deadline=None)
@given(pages=st.lists(st.tuples(lines_strategy, redactions), min_size=1, max_size=6))
def test_every_read_equals_a_full_parse(
    pages: list[tuple[list[tuple[int, str]], dict[str, list[str]]]],
) -> None:
    reader = SnapshotReader()
    for lines, redaction in pages:
        text = text_of(lines)
        assert reader.read(text, **redaction) == _full(text, **redaction)


edits = line_edits(LINES, places=60, depths=4, most=5)


@settings(max_examples=300, deadline=None)
@given(lines=lines_strategy, changes=st.lists(edits, min_size=1, max_size=4))
def test_a_page_changed_line_by_line_reads_as_a_full_parse(
    lines: list[tuple[int, str]], changes: list[list[tuple[str, int, int, str]]]
) -> None:
    reader = SnapshotReader()
    assert reader.read(text_of(lines)) == _full(text_of(lines))
    for batch in changes:
        apply_edits(lines, batch)
        text = text_of(lines)
        assert reader.read(text) == _full(text)


PAGE = "\n".join(
    ["- generic [active] [ref=e1]:"]
    + [f'  - paragraph [ref=p{i}]:\n    - button "Button {i}" [ref=b{i}]' for i in range(50)]
)


def test_unchanged_subtrees_keep_their_nodes_and_a_changed_one_is_parsed_again() -> None:
    reader = SnapshotReader()
    before = reader.read(PAGE)
    changed = PAGE.replace('"Button 7" [ref=b7]', '"Button 7" [pressed] [ref=b7]')
    after = reader.read(changed)
    assert after == _full(changed)
    pairs = list(zip(before.nodes, after.nodes, strict=True))
    fresh = [b for a, b in pairs if a is not b]
    # The changed button, its paragraph and the page's root are new; the rest is reused.
    assert [n.ref for n in fresh] == ["e1", "p7", "b7"]
    assert after.nodes[16].states.pressed is True


def test_a_page_nested_deeper_than_the_reuse_walk_is_parsed_in_full() -> None:
    deep = "\n".join("  " * i + f"- generic [ref=e{i}]:" for i in range(450))
    reader = SnapshotReader()
    assert reader.read(deep) == _full(deep)
    assert reader.read(deep + '\n- button "x"') == _full(deep + '\n- button "x"')


# The lines of a later snapshot are scanned from the earlier one's: the same as a fresh scan.

pieces = st.sampled_from(["", "  ", "- ", "\n", "\n  - ", ":", '"x"', "[ref=e9]", "/url: a"])
char_edits = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 12), pieces), min_size=1, max_size=4
)


def _edited(text: str, edits: list[tuple[float, int, str]]) -> str:
    """Characters removed and inserted anywhere: mid-line, at the start or at the end."""
    for where, removed, inserted in edits:
        at = round(where * len(text))
        text = text[:at] + inserted + text[at + removed :]
    return text


def _lines_equal(scan: _Lines, expected: _Lines) -> None:
    assert scan == expected, (scan, expected)


@settings(max_examples=400, deadline=None)
@given(lines=lines_strategy, changes=st.lists(edits, min_size=1, max_size=4))
def test_lines_scanned_again_after_line_edits_equal_a_fresh_scan(
    lines: list[tuple[int, str]], changes: list[list[tuple[str, int, int, str]]]
) -> None:
    previous = _scan(text_of(lines))
    for batch in changes:
        apply_edits(lines, batch)
        text = text_of(lines)
        rescanned = _rescan(previous, text)
        _lines_equal(rescanned, _scan(text))
        previous = rescanned


@settings(max_examples=400, deadline=None)
@given(lines=lines_strategy, changes=st.lists(char_edits, min_size=1, max_size=4))
def test_lines_scanned_again_after_character_edits_equal_a_fresh_scan(
    lines: list[tuple[int, str]], changes: list[list[tuple[float, int, str]]]
) -> None:
    text = text_of(lines)
    previous = _scan(text)
    for batch in changes:
        text = _edited(text, batch)
        rescanned = _rescan(previous, text)
        _lines_equal(rescanned, _scan(text))
        previous = rescanned


@settings(max_examples=200, deadline=None)
@given(
    lines=lines_strategy,
    changes=st.lists(char_edits, min_size=1, max_size=4),
    redaction=redactions,
)
def test_a_page_edited_anywhere_reads_as_a_full_parse(
    lines: list[tuple[int, str]],
    changes: list[list[tuple[float, int, str]]],
    redaction: dict[str, list[str]],
) -> None:
    text = text_of(lines)
    reader = SnapshotReader()
    assert reader.read(text, **redaction) == _full(text, **redaction)
    for batch in changes:
        text = _edited(text, batch)
        assert reader.read(text, **redaction) == _full(text, **redaction)


def test_a_nested_subtree_replaced_in_the_middle_links_its_ancestors_again() -> None:
    before = "- a:\n  - b:\n    - c\n    - d\n  - e\n- f"
    after = "- a:\n  - b:\n    - c\n      - x:\n        - y\n  - e\n- f"
    scan = _rescan(_scan(before), after)
    assert scan == _scan(after)
    assert list(scan.children(0)) == [1, 5]
    assert scan.after[2:4] == [5, 5]
