"""The ``northstar`` command (also ``python -m northstar``).

It starts Playwright's driver for ``northstar run`` before the CLI itself is imported
(``northstar._early_start``), then hands the arguments to ``northstar.cli.main``. Before
anything else, ``run`` and ``resume`` turn Ctrl-C and SIGTERM into a stop request
(``northstar._stop_requests``), so a Ctrl-C during start-up is no traceback either.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from northstar._early_start import early_start
from northstar._stop_requests import catch_stop_signals_for

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(argv) if argv is not None else sys.argv[1:]
    with catch_stop_signals_for(args), early_start(args):
        from northstar.cli import main as cli_main  # imported while the driver boots

        cli_main(args)


if __name__ == "__main__":
    main()
