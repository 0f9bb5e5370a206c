"""Pages as ``(depth, line)`` lists and random line edits of them, for the property tests.

A page's text indents each line two spaces per level, as Playwright's snapshot does; an
edit replaces, inserts or deletes one line at a place taken modulo the page's length.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from northstar.monitor.observation import Observation, assemble_observation
from northstar.monitor.snapshot_reader import SnapshotReader

Lines = list[tuple[int, str]]
Edit = tuple[str, int, int, str]  # kind, place, depth, line


def text_of(lines: Lines) -> str:
    return "\n".join("  " * depth + line for depth, line in lines)


def line_edits(
    pool: Sequence[str], *, places: int, depths: int, most: int
) -> st.SearchStrategy[list[Edit]]:
    """A batch of 1 to ``most`` edits with lines from ``pool``."""
    kinds = st.sampled_from(["replace", "insert", "delete"])
    edit = st.tuples(kinds, st.integers(0, places), st.integers(0, depths), st.sampled_from(pool))
    return st.lists(edit, min_size=1, max_size=most)


def apply_edits(lines: Lines, edits: Sequence[Edit]) -> None:
    """Apply ``edits`` to ``lines`` in place (an edit of an empty page inserts)."""
    for kind, where, depth, line in edits:
        at = where % (len(lines) + 1)
        if kind == "insert" or not lines:
            lines.insert(at, (depth, line))
        elif kind == "replace":
            lines[at % len(lines)] = (depth, line)
        else:
            del lines[at % len(lines)]


def look_at(reader: SnapshotReader, lines: Lines) -> Observation:
    """The observation of tab "t" that ``reader`` makes of the page ``lines`` (no frames)."""
    return assemble_observation(
        reader.read(text_of(lines)),
        str,
        tab="t",
        url="u",
        title="",
        snapshot_id="s",
        frames=(),
        media=(),
    )
