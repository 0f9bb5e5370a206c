"""A CSV or JSON Lines params file read one row at a time, as often as a run needs it.

A batch of 100,000 rows is never held in memory: ``RowsFile`` opens the file afresh for
each pass (the check before the run, the run's own rows, a resume's row N) and yields its
rows in order. A structural error (not CSV, a NUL byte, not UTF-8, a name twice, a nested
value) is raised when its row is reached and names the file's line, so a bad row 3 is
reported before the rest of the file is read. Each pass after the first checks that the
file still has the size and modification time it had (``FILE_CHANGED`` otherwise): the
rows a run checked are the rows it runs.

``LazyRows`` is the typed view a ``RunRequest`` holds: its length is known from the check's
pass, and row N is typed again when it is asked for (iterations ask in order; a small
window keeps the latest rows for lanes that ask a little out of order, anything earlier
reads the file again from its start).
"""

from __future__ import annotations

import csv
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, overload

from northstar.errors import FileChanged, InputError, UsageInvalid
from northstar.recipe._files import open_bounded
from northstar.recipe._values import csv_row, json_row, refuse_twice

__all__ = ["LINE", "LazyRows", "RowsFile", "at_line"]

LINE = "line"  # the context key of the file line an error's row starts on
_FIELD_LIMIT = 64 << 20  # above any params file's bound: a field may be the whole file
_LONE_CR = re.compile(rb"(?<=\r)(?!\n)(?=.)", re.DOTALL)  # after a "\r" that ends a line
_WINDOW = 64  # typed rows kept for lanes that ask slightly out of order
Row = dict[str, Any]
EachRow = Callable[[Row], Row]


class RowsFile:
    """The rows of a ``.csv`` or ``.jsonl`` params file, read lazily on every pass.

    ``each``: what every row becomes once read (the columns it maps to parameters), so its
    refusal also names the row's line. ``limit``: the size the file may have, in bytes.
    """

    def __init__(self, path: Path, *, limit: int, each: EachRow | None = None) -> None:
        self.path = path
        self.limit = limit
        self.each = each
        self._stamp: tuple[int, int] | None = None

    def with_each(self, each: EachRow) -> RowsFile:
        """The same file, each row passed through ``each`` (the stamp is shared)."""
        other = RowsFile(self.path, limit=self.limit, each=each)
        other._stamp = self._stamp
        return other

    def __iter__(self) -> Iterator[Row]:
        return (row for _, row in self.numbered())

    def numbered(self) -> Iterator[tuple[int, Row]]:
        """Each row with the file line it starts on, from a fresh read of the file."""
        with self._open() as data:
            rows = (
                _csv_rows(_lines(data, self.path, lone_cr_ends=True), self.path)
                if _is_csv(self.path)
                else _jsonl_rows(_lines(data, self.path, lone_cr_ends=False), self.path)
            )
            for line, row in rows:
                try:
                    yield line, (self.each(row) if self.each else row)
                except InputError as exc:
                    raise at_line(exc, self.path, line) from None

    def _open(self) -> BinaryIO:
        def refuse(message: str, fix: str) -> UsageInvalid:
            return UsageInvalid(f"{self.path}: {message}", fix=fix)

        handle = open_bounded(self.path, limit=self.limit, what="params file", refuse=refuse)
        status = os.fstat(handle.fileno())
        stamp = (status.st_size, status.st_mtime_ns)
        if self._stamp is not None and stamp != self._stamp:
            handle.close()
            raise FileChanged(
                f"{self.path} changed since its rows were checked",
                fix="Restore the params file, or start a new run with the changed one.",
            )
        self._stamp = stamp
        return handle


def _is_csv(path: Path) -> bool:
    return path.suffix.lower() == ".csv"


def _lines(data: BinaryIO, file: Path, *, lone_cr_ends: bool) -> Iterator[str]:
    """The file's lines, each decoded alone and refused if it holds a NUL byte or is not
    UTF-8, so a refusal names its own line and comes when that line is reached.

    ``lone_cr_ends``: a ``\r`` not followed by ``\n`` ends a line too (CSV; JSON Lines
    end at ``\n`` only).
    """
    number = 0
    for raw in data:
        pieces = _LONE_CR.split(raw) if lone_cr_ends and b"\r" in raw else [raw]
        for piece in pieces:
            number += 1
            try:
                line = piece.decode("utf-8")
            except UnicodeDecodeError:
                raise UsageInvalid(
                    f"{file}: line {number} is not UTF-8 text", fix="Save the params file as UTF-8."
                ) from None
            if "\x00" in line:
                raise UsageInvalid(
                    f"{file}: line {number} holds a NUL byte",
                    fix="Remove the NUL byte; values are text.",
                )
            yield line.removeprefix("\ufeff") if number == 1 else line


def _csv_rows(lines: Iterator[str], file: Path) -> Iterator[tuple[int, Row]]:
    reader = csv.DictReader(lines)
    try:
        yield from _csv_records(reader, file)
    except csv.Error as exc:
        raise UsageInvalid(
            f"{file}: line {reader.line_num} is not valid CSV ({exc})",
            fix="Quote values that contain commas, quotes or line breaks.",
        ) from None


def _next_record(reader: csv.DictReader[str]) -> dict[str | Any, str | Any] | None:
    """The next record, read with csv's field limit (128 KiB, below the file bound) lifted
    for this read only: a pass suspended between rows leaves the process's limit as it was."""
    previous = csv.field_size_limit(_FIELD_LIMIT)
    try:
        return next(reader, None)
    finally:
        csv.field_size_limit(previous)


def _header(reader: csv.DictReader[str]) -> Sequence[str] | None:
    previous = csv.field_size_limit(_FIELD_LIMIT)  # a header name may be long too
    try:
        return reader.fieldnames
    finally:
        csv.field_size_limit(previous)


def _csv_records(reader: csv.DictReader[str], file: Path) -> Iterator[tuple[int, Row]]:
    header = _header(reader)
    if not header:
        raise UsageInvalid(f"{file}: no header line", fix="Put parameter names on the first line.")
    refuse_twice([name.strip() for name in header], file, "the header")
    number = 0
    while True:
        line = reader.line_num + 1
        row = _next_record(reader)
        if row is None:
            return _none_after(number, file)
        number += 1
        try:
            yield line, csv_row(row, number, file)
        except InputError as exc:
            raise at_line(exc, file, line) from None


def _jsonl_rows(lines: Iterator[str], file: Path) -> Iterator[tuple[int, Row]]:
    number = 0
    for line_number, line in enumerate(lines, start=1):
        if line.strip():
            number += 1
            try:
                yield line_number, json_row(line, number, file)
            except InputError as exc:
                raise at_line(exc, file, line_number) from None
    _none_after(number, file)


def _none_after(number: int, file: Path) -> None:
    """A file that ended before its first row is refused, as a file with no rows."""
    if not number:
        raise UsageInvalid(f"{file}: no rows", fix="Add at least one row of parameters.")


def at_line(exc: InputError, file: Path, line: int) -> InputError:
    """The same refusal naming the file's line its row starts on (once: inner ones win)."""
    if LINE in exc.context:
        return exc
    message = exc.message.removeprefix(f"{file}: ")
    return type(exc)(f"{file} line {line}: {message}", fix=exc.fix, **{**exc.context, LINE: line})


Typed = Callable[[int, Row], Mapping[str, Any]]


class LazyRows(Sequence[Mapping[str, Any]]):
    """Typed rows read from a ``RowsFile`` when asked for, never all held at once."""

    def __init__(self, rows: RowsFile, count: int, typed: Typed, fingerprint: str) -> None:
        self._rows = rows
        self._count = count
        self.fingerprint = fingerprint  # the rows' digest, taken by the check's pass
        self._typed = typed
        self._cursor: Iterator[tuple[int, Row]] | None = None
        self._next = 1  # the number of the row the cursor yields next
        self._recent: OrderedDict[int, Mapping[str, Any]] = OrderedDict()

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        for number, (_, row) in enumerate(self._rows.numbered(), start=1):
            yield self._typed(number, row)

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Mapping[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | Sequence[Mapping[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        number = (index if index >= 0 else index + self._count) + 1
        if not 1 <= number <= self._count:
            raise IndexError(index)
        if number in self._recent:
            return self._recent[number]
        return self._read_up_to(number)

    def _read_up_to(self, number: int) -> Mapping[str, Any]:
        if self._cursor is None or number < self._next:
            self._cursor, self._next = self._rows.numbered(), 1
        while True:
            _, row = next(self._cursor)
            typed = self._typed(self._next, row)
            self._recent[self._next] = typed
            if len(self._recent) > _WINDOW:
                self._recent.popitem(last=False)
            self._next += 1
            if self._next > number:
                return typed
