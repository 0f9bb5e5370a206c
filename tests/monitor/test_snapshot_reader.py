"""The incremental snapshot reader gives exactly what a full parse gives, on any sequence."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from northstar.monitor.observation import ParsedPage, build_observation
from northstar.monitor.snapshot_reader import SnapshotReader

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


def _text(lines: list[tuple[int, str]]) -> str:
    return "\n".join("  " * depth + line for depth, line in lines)


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
        text = _text(lines)
        assert reader.read(text, **redaction) == _full(text, **redaction)


edits = st.lists(
    st.tuples(
        st.sampled_from(["replace", "insert", "delete"]),
        st.integers(0, 60),
        st.integers(0, 4),
        st.sampled_from(LINES),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(lines=lines_strategy, changes=st.lists(edits, min_size=1, max_size=4))
def test_a_page_changed_line_by_line_reads_as_a_full_parse(
    lines: list[tuple[int, str]], changes: list[list[tuple[str, int, int, str]]]
) -> None:
    reader = SnapshotReader()
    assert reader.read(_text(lines)) == _full(_text(lines))
    for batch in changes:
        for kind, where, depth, line in batch:
            at = where % (len(lines) + 1)
            if kind == "insert" or not lines:
                lines.insert(at, (depth, line))
            elif kind == "replace":
                lines[at % len(lines)] = (depth, line)
            else:
                del lines[at % len(lines)]
        text = _text(lines)
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
