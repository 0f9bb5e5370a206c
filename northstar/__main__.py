"""The ``northstar`` command (also ``python -m northstar``).

It starts Playwright's driver for ``northstar run`` before the CLI itself is imported
(``northstar._early_start``), then hands the arguments to ``northstar.cli.main``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from northstar._early_start import early_start

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(argv) if argv is not None else sys.argv[1:]
    with early_start(args):
        from northstar.cli import main as cli_main  # imported while the driver boots

        cli_main(args)


if __name__ == "__main__":
    main()
