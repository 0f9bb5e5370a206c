"""Reading an input file (a recipe, a params file): a regular file of bounded size, or nothing.

A FIFO would block the reader until a writer came, and ``/dev/zero`` never ends; so the
path is checked with ``stat`` before it is opened (which cannot block), opened without
blocking, checked again on the open descriptor (the path may have changed between the
two), and read up to its bound plus one byte: a file that grew past the bound is refused
without being read to its end.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from northstar.errors import InputError

__all__ = ["open_bounded", "read_bounded_text"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

Refuse = Callable[[str, str], InputError]  # (message, fix) -> the error, naming the path


def read_bounded_text(path: Path, *, limit: int, what: str, refuse: Refuse) -> str:
    """The UTF-8 text of the regular file at ``path``, at most ``limit`` bytes long."""
    with open_bounded(path, limit=limit, what=what, refuse=refuse) as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise _unreadable(exc, what, refuse) from None
    if len(data) > limit:
        raise _too_large(limit, what, refuse)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise refuse(f"the {what} is not UTF-8 text", f"Save the {what} as UTF-8 text.") from None


def open_bounded(path: Path, *, limit: int, what: str, refuse: Refuse) -> BinaryIO:
    """The regular file at ``path`` opened for reading in binary, refused before any byte
    is read when it is of another kind or already larger than ``limit`` (a reader that
    streams it still stops at ``limit``: the file may grow)."""
    try:
        _check_kind(os.stat(path).st_mode, what, refuse)
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise refuse(f"no {what} there", f"Check the path to the {what}.") from None
    except OSError as exc:
        raise _unreadable(exc, what, refuse) from None
    handle = os.fdopen(descriptor, "rb")
    try:
        status = os.fstat(descriptor)
        _check_kind(status.st_mode, what, refuse)
    except OSError as exc:
        handle.close()
        raise _unreadable(exc, what, refuse) from None
    except InputError:
        handle.close()
        raise
    if status.st_size > limit:
        handle.close()
        raise _too_large(limit, what, refuse)
    return handle


def _too_large(limit: int, what: str, refuse: Refuse) -> InputError:
    return refuse(
        f"the {what} is larger than {_size(limit)}",
        f"Keep a {what} under {_size(limit)}; split a long batch into several runs.",
    )


def _check_kind(mode: int, what: str, refuse: Refuse) -> None:
    for test, kind in _KINDS:
        if test(mode):
            raise refuse(f"the {what} is {kind}, not a regular file", f"Pass the path of a {what}.")
    if not stat.S_ISREG(mode):
        raise refuse(f"the {what} is not a regular file", f"Pass the path of a {what}.")


def _unreadable(exc: OSError, what: str, refuse: Refuse) -> InputError:
    reason = exc.strerror or exc.__class__.__name__
    return refuse(f"cannot read the {what}: {reason}", f"Pass a readable {what}.")


def _size(limit: int) -> str:
    return f"{limit // (1 << 20)} MiB" if limit >= 1 << 20 else f"{limit} bytes"
