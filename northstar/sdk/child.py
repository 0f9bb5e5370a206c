"""``python -m northstar.sdk.child PATH``: run one iteration of a program for the host.

Loads the program file as a module (its folder first on ``sys.path``, so its local
modules import), connects to the host and awaits ``main(session)``. The exit status is
the program's: 0 when ``main`` returned, 1 with one line on stderr when it raised. Only
the host's record decides whether the iteration is verified.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from northstar.errors import NorthstarError
from northstar.sdk.session import connect

__all__ = ["main"]


def _load(path: Path) -> ModuleType:
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("northstar_program", path)
    if spec is None or spec.loader is None:
        raise NorthstarError(f"cannot load program {path}", fix="Pass a .py file.")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _run(path: Path) -> None:
    program = _load(path)
    session = await connect()
    try:
        await program.main(session)
    finally:
        await session.close()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m northstar.sdk.child PROGRAM.py\n")
        return 2
    try:
        asyncio.run(_run(Path(args[0]).resolve()))
    except NorthstarError as exc:
        sys.stderr.write(f"{exc.code}: {exc.message}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
