"""The files a run left for a person beside the journal: failure screenshots and traces.

Their names are fixed by the run (``iteration-NNNN-<moment>-<role>.png``,
``iteration-NNNN-trace.zip`` in ``runs/RUN_ID/``), so a reader finds them by listing the
folder; nothing about them is in the journal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["IterationFiles", "iteration_files"]


@dataclass(frozen=True, slots=True)
class IterationFiles:
    """An iteration's screenshots (sorted) and its trace, if it has one; absolute paths."""

    screenshots: tuple[Path, ...]
    trace: Path | None

    def __bool__(self) -> bool:
        return bool(self.screenshots) or self.trace is not None


def iteration_files(artifacts: Path, number: int) -> IterationFiles:
    """What is in ``artifacts`` for iteration ``number``; a missing folder holds nothing."""
    if not artifacts.is_dir():
        return IterationFiles((), None)
    folder = artifacts.resolve()
    shots = tuple(sorted(folder.glob(f"iteration-{number:04d}-*.png")))
    trace = folder / f"iteration-{number:04d}-trace.zip"
    return IterationFiles(shots, trace if trace.is_file() else None)
