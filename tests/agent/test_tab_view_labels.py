"""The labels a tab view remembers are those of every look replayed in full, in order.

``TabView.saw`` skips the nodes a look shares with the one before when both hold the same
references in the same order; these tests replay every look in full and compare.
"""

from __future__ import annotations

from collections import OrderedDict

from hypothesis import given, settings
from hypothesis import strategies as st

from northstar.agent.references import TabView
from northstar.monitor.observation import node_label
from northstar.monitor.snapshot_reader import SnapshotReader
from tests.monitor.page_edits import look_at

# Labels that change under the same reference, a repeated reference, text without one.
LINES = [
    "- generic [ref=e1]:",
    "- generic [active] [ref=e1]:",
    '- button "Save" [ref=e2]',
    '- button "Saved" [ref=e2]',
    '- textbox "Name" [ref=e3]: Ada',
    '- textbox "Name" [active] [ref=e3]: Grace',
    '- link "Next" [ref=e4]',
    '- link "Again" [ref=e4]',
    "- text: Total 42",
    "- paragraph: Updated",
]
pages = st.lists(st.tuples(st.integers(0, 2), st.sampled_from(LINES)), max_size=10)


@settings(max_examples=300, deadline=None)
@given(looks=st.lists(pages, min_size=1, max_size=6))
def test_the_labels_equal_every_look_replayed_in_full(
    looks: list[list[tuple[int, str]]],
) -> None:
    reader, view = SnapshotReader(), TabView("t")
    expected: OrderedDict[str, str] = OrderedDict()
    for lines in looks:
        look = look_at(reader, lines)
        view.saw(look)
        for node in look.nodes:
            if node.ref is not None:
                expected[node.ref] = node_label(node.role, node.name)
                expected.move_to_end(node.ref)
        assert list(view.labels.items()) == list(expected.items())
        assert view.latest is look


def test_a_renamed_button_is_labelled_anew_and_keeps_its_place() -> None:
    reader, view = SnapshotReader(), TabView("t")
    view.saw(look_at(reader, [(0, '- button "Save" [ref=e2]'), (0, '- link "Next" [ref=e4]')]))
    view.saw(look_at(reader, [(0, '- button "Saved" [ref=e2]'), (0, '- link "Next" [ref=e4]')]))
    assert list(view.labels.items()) == [("e2", 'button "Saved"'), ("e4", 'link "Next"')]


def test_a_button_renamed_below_new_text_is_labelled_anew() -> None:
    reader, view = SnapshotReader(), TabView("t")
    view.saw(look_at(reader, [(0, '- button "Save" [ref=e2]')]))
    view.saw(look_at(reader, [(0, "- text: Total 42"), (0, '- button "Saved" [ref=e2]')]))
    assert list(view.labels.items()) == [("e2", 'button "Saved"')]
