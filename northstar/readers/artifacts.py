"""The files a run left for a person beside the journal: failure screenshots and traces.

Their names are fixed by the run (``iteration-NNNN-<moment>-<role>.png``,
``iteration-NNNN-trace.zip`` in ``runs/RUN_ID/``), so a reader finds them by listing the
folder; nothing about them is in the journal. The folder of a long run also holds one
result file per iteration (100,000 of them), so a reader that asks about many iterations
lists it once (``ArtifactFiles``) instead of once per iteration.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ArtifactFiles", "IterationFiles", "iteration_files"]


@dataclass(frozen=True, slots=True)
class IterationFiles:
    """An iteration's screenshots (sorted) and its trace, if it has one; absolute paths."""

    screenshots: tuple[Path, ...]
    trace: Path | None

    def __bool__(self) -> bool:
        return bool(self.screenshots) or self.trace is not None


def iteration_files(artifacts: Path, number: int) -> IterationFiles:
    """What is in ``artifacts`` for iteration ``number``; a missing folder holds nothing."""
    return ArtifactFiles(artifacts).of(number)


_NONE = IterationFiles((), None)
_SCREENSHOT = re.compile(r"iteration-(\d+)-.+\.png")
_TRACE = re.compile(r"iteration-(\d+)-trace\.zip")


class ArtifactFiles:
    """A run's files by iteration, from one listing of its folder, made on first use."""

    def __init__(self, artifacts: Path) -> None:
        self.artifacts = artifacts
        self._by_number: dict[int, IterationFiles] | None = None

    def of(self, number: int) -> IterationFiles:
        if self._by_number is None:
            self._by_number = _listing(self.artifacts)
        return self._by_number.get(number, _NONE)


def _listing(artifacts: Path) -> dict[int, IterationFiles]:
    if not artifacts.is_dir():
        return {}
    folder = artifacts.resolve()
    shots: dict[int, list[Path]] = {}
    traces: dict[int, Path] = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if trace := _TRACE.fullmatch(entry.name):
                traces[int(trace[1])] = folder / entry.name
            elif shot := _SCREENSHOT.fullmatch(entry.name):
                shots.setdefault(int(shot[1]), []).append(folder / entry.name)
    numbers = shots.keys() | traces.keys()
    return {n: IterationFiles(tuple(sorted(shots.get(n, ()))), traces.get(n)) for n in numbers}
