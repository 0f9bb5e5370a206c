"""Whether an answer shows the whole page is decided the same with or without shared nodes.

``shows_whole_page`` stops at the first node two looks share (a ``SnapshotReader`` keeps
the nodes of unchanged subtrees); it must answer what comparing every reference answers.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from northstar.agent.references import shows_whole_page
from northstar.monitor.observation import Observation
from northstar.monitor.snapshot_reader import SnapshotReader
from tests.monitor.page_edits import look_at

LINES = [
    "- generic [ref=e1]:",
    '- button "Save" [ref=e2]',
    '- button "Save" [pressed] [ref=e2]',
    '- textbox "Name" [ref=e3]: Ada',
    '- link "Next" [ref=f4]',
    "- text: Total 42",
    "- paragraph: Updated",
]
pages = st.lists(st.tuples(st.integers(0, 2), st.sampled_from(LINES)), max_size=12)


def _by_every_reference(previous: Observation, latest: Observation) -> bool:
    before = {n.ref for n in previous.nodes if n.ref is not None}
    return not any(n.ref in before for n in latest.nodes if n.ref is not None)


@settings(max_examples=300, deadline=None)
@given(looks=st.lists(pages, min_size=2, max_size=5))
def test_the_decision_equals_a_comparison_of_every_reference(
    looks: list[list[tuple[int, str]]],
) -> None:
    reader = SnapshotReader()
    previous = look_at(reader, looks[0])
    for lines in looks[1:]:
        latest = look_at(reader, lines)
        expected = _by_every_reference(previous, latest)
        assert shows_whole_page(previous, latest, full=False) is expected
        previous = latest
