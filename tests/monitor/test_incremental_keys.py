"""What is taken from a tab's previous reading equals what a full computation gives.

The meaningful nodes, the fingerprints' key sections, the screen change and the agent's
labels reuse the previous reading's work at the positions that hold the same node objects
(``SnapshotReader``). On random pages changed line by line, each must equal the computation
over every node, whatever the limit of changed positions that are spliced in place.
"""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from northstar.agent.references import TabView
from northstar.monitor import fingerprints as fp
from northstar.monitor import positions
from northstar.monitor.observation import Observation, build_observation
from northstar.monitor.screen_change import screen_change
from northstar.monitor.snapshot_reader import SnapshotReader
from tests.monitor.page_edits import apply_edits, line_edits, text_of
from tests.monitor.test_snapshot_reader import LINES

Lines = list[tuple[int, str]]

# The reader test's lines, and some that keep a reference under another name or role.
KEYED_LINES = [
    *LINES,
    '- button "Menu closed" [ref=e7]',
    '- link "Previous" [ref=e4] [cursor=pointer]:',
    "- generic [ref=e2]:",
]
lines_strategy = st.lists(
    st.tuples(st.integers(0, 4), st.sampled_from(KEYED_LINES)), min_size=0, max_size=40
)
edits = line_edits(KEYED_LINES, places=60, depths=4, most=5)


def _pages(lines: Lines, changes: list[list[tuple[str, int, int, str]]]) -> Iterator[str]:
    """The page, then the page after each batch of line edits."""
    yield text_of(lines)
    for batch in changes:
        apply_edits(lines, batch)
        yield text_of(lines)


def _read(reader: SnapshotReader, text: str, tab: str, number: int) -> Observation:
    page = reader.read(text)
    return Observation.model_construct(
        tab=tab, url="u", snapshot_id=f"s{number}", nodes=page.nodes, text=page.text
    )


def _expected_digest(observation: Observation) -> fp.ObservationDigest:
    """Every key hashed from sections joined over every meaningful node, with no cache."""
    shown = tuple(n for n in observation.nodes if not n.structural)
    keys = [fp._keys_of(n) for n in shown]
    where = repr((observation.tab, observation.url))
    head = repr((observation.tab, observation.url, observation.title, ()))
    coarse, cycle = ",".join(k.coarse for k in keys), ",".join(k.cycle for k in keys)
    return fp.ObservationDigest(
        tab=observation.tab,
        fingerprint=fp._hash(head, ",".join(k.exact for k in keys), "()", "()"),
        state_key=fp._hash(where, coarse, "()"),
        cycle_key=fp._hash(where, cycle, "()"),
        controls_key=fp._hash(where, ",".join(k.coarse for k in keys if k.control)),
    )


def _fresh(text: str, number: int) -> Observation:
    """The same page parsed in full on a tab of its own: new node objects, nothing reused."""
    return build_observation(tab="fresh", url="u", snapshot_text=text, snapshot_id=f"f{number}")


@settings(max_examples=200, deadline=None)
@given(
    lines=lines_strategy,
    changes=st.lists(edits, min_size=1, max_size=5),
    limit=st.sampled_from([0, 1, 3, 64]),
)
def test_every_reading_equals_the_computation_over_every_node(
    lines: Lines, changes: list[list[tuple[str, int, int, str]]], limit: int
) -> None:
    saved, positions.MAX_CHANGED = positions.MAX_CHANGED, limit
    try:
        _check_pages(list(_pages(lines, changes)))
    finally:
        positions.MAX_CHANGED = saved


def _check_pages(texts: list[str]) -> None:
    reader, view, fresh_view = SnapshotReader(), TabView("t"), TabView("fresh")
    previous: tuple[Observation, Observation] | None = None
    for number, text in enumerate(texts):
        observation, fresh = _read(reader, text, "t", number), _fresh(text, number)
        assert observation.meaningful_nodes == fresh.meaningful_nodes
        assert fp.digest_observation(observation) == _expected_digest(observation)
        if previous is not None:
            change = screen_change(previous[0], observation)
            assert change.model_copy(update={"tab": "fresh"}) == screen_change(previous[1], fresh)
        view.saw(observation)
        fresh_view.saw(fresh)
        assert list(view.labels.items()) == list(fresh_view.labels.items())
        previous = observation, fresh


def test_a_node_that_turns_structural_in_place_is_left_out() -> None:
    """A changed position whose node stops (or starts) being shown is not spliced in place."""
    reader = SnapshotReader()
    named = '- generic [ref=e1]:\n  - group "Box" [ref=e2]:\n    - button "Go" [ref=e3]'
    first = _read(reader, named, "t", 0)
    assert [n.role for n in first.meaningful_nodes] == ["group", "button"]
    later = _read(reader, named.replace('group "Box"', "generic"), "t", 1)
    assert len(later.nodes) == len(first.nodes)
    assert [n.role for n in later.meaningful_nodes] == ["button"]
    assert fp.digest_observation(later) == _expected_digest(later)


def test_only_the_changed_positions_are_keyed_again() -> None:
    """After a fill on a large page, the keys of kept nodes are not computed again."""
    rows = [f'  - paragraph [ref=p{i}]:\n    - textbox "Field {i}" [ref=t{i}]' for i in range(300)]
    page = "\n".join(["- generic [ref=e1]:", *rows])
    reader = SnapshotReader()
    fp.digest_observation(_read(reader, page, "t", 0))
    filled = page.replace('"Field 150" [ref=t150]', '"Field 150" [ref=t150]: typed')
    observation = _read(reader, filled, "t", 1)
    before = fp._LATEST_KEYS["t"].nodes
    fresh = [i for i, n in enumerate(observation.meaningful_nodes) if n is not before[i]]
    assert len(fresh) == 2  # the field and its paragraph; the other 598 nodes are kept
    assert fp.digest_observation(observation) == _expected_digest(observation)


def test_the_lines_of_the_reader_test_cover_structural_and_shown_nodes() -> None:
    """The random pages mix both kinds, so a change of kind in place is exercised."""
    text = text_of([(0, line) for line in KEYED_LINES])
    parsed = build_observation(tab="x", url="u", snapshot_text=text, snapshot_id="s")
    assert {n.structural for n in parsed.nodes} == {True, False}
