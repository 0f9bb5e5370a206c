"""A look whose changed positions keep their references relabels those positions alone."""

from __future__ import annotations

from northstar.agent.references import TabView
from northstar.monitor.observation import Observation
from northstar.monitor.snapshot_reader import SnapshotReader


def _read(reader: SnapshotReader, text: str, number: int) -> Observation:
    page = reader.read(text)
    return Observation.model_construct(
        tab="t", url="u", snapshot_id=f"s{number}", nodes=page.nodes, text=page.text
    )


def test_a_renamed_element_that_keeps_its_reference_is_relabeled() -> None:
    reader, view = SnapshotReader(), TabView("t")
    page = '- generic [ref=e1]:\n  - button "Open" [ref=e2]\n  - button "Save" [ref=e3]'
    first = _read(reader, page, 0)
    view.saw(first)
    later = _read(reader, page.replace('"Open"', '"Close"'), 1)
    assert later.nodes[2] is first.nodes[2]  # the kept button: only the others are new
    view.saw(later)
    assert view.label("e2") == 'button "Close"'
    assert view.label("e3") == 'button "Save"'
    assert list(view.labels) == ["e1", "e2", "e3"]
