"""The SDK's and the broker's exported names are pinned; the SDK loads nothing of the host."""

from __future__ import annotations

import json
import subprocess
import sys

import northstar.programs
import northstar.sdk


def test_the_exported_names_are_pinned() -> None:
    assert northstar.sdk.__all__ == ["Session", "Tab", "connect"]
    assert northstar.programs.__all__ == [
        "IterationEvidence",
        "ProgramBroker",
        "ProgramDeclaration",
        "is_program",
        "load_program",
        "program_compiled",
        "program_verdict",
        "run_program",
    ]


def test_a_program_process_loads_neither_the_browser_nor_the_journal() -> None:
    script = (
        "import json, sys, northstar.sdk, northstar.sdk.child\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(\n"
        "    ('playwright', 'browser_adapters', 'northstar.journal', 'northstar.run',\n"
        "     'northstar.agent', 'northstar.programs', 'pydantic')))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []
