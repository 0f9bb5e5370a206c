"""Writing a file a person named (``report --out``, ``schema --out``, ``import-codegen --to``).

One rule for every command that writes where it is told: a symbolic link is never written
through (it could point anywhere the user may write: ``~/.bashrc``), an existing file is
replaced only with ``--force``, and something that is not a regular file (a FIFO, a
device, a folder) is never opened for writing. The checks are made on the path first, for
a clear message, and again by the open itself (``O_NOFOLLOW``, ``O_EXCL`` or a check of
the open descriptor), so a path swapped between the two cannot slip through.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from northstar.errors import UsageInvalid

__all__ = ["refuse_unsafe_target", "write_text"]


def refuse_unsafe_target(path: Path, *, force: bool, option: str) -> None:
    """``USAGE_INVALID`` for a link, a file there without ``force``, or no regular file."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _cannot(path, exc, option) from None
    if stat.S_ISLNK(mode):
        raise _link(path, option)
    if not stat.S_ISREG(mode):
        raise _not_regular(path, option)
    if not force:
        raise _exists(path, option)


def write_text(path: Path, text: str, *, force: bool, option: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` under the rule above; its folder is made if missing."""
    refuse_unsafe_target(path, force=force, option=option)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    flags |= os.O_TRUNC if force else os.O_EXCL
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, flags, 0o644)
    except OSError as exc:
        raise _cannot(path, exc, option) from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # swapped in after the check
            raise _not_regular(path, option)
        handle.write(text)


def _cannot(path: Path, exc: OSError, option: str) -> UsageInvalid:
    if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link put there after the check
        return _link(path, option)
    if exc.errno == errno.EEXIST:  # O_EXCL met a file put there after the check
        return _exists(path, option)
    why = exc.strerror or str(exc)
    return UsageInvalid(f"cannot write {path}: {why}", fix=f"Choose another {option}.")


def _link(path: Path, option: str) -> UsageInvalid:
    return UsageInvalid(
        f"{path} is a symbolic link; Northstar does not write through links",
        fix=f"Give {option} the real path, or remove the link.",
    )


def _exists(path: Path, option: str) -> UsageInvalid:
    return UsageInvalid(
        f"{path} already exists", fix=f"Pass --force to replace it, or choose another {option}."
    )


def _not_regular(path: Path, option: str) -> UsageInvalid:
    return UsageInvalid(f"{path} is not a regular file", fix=f"Choose another {option}.")
