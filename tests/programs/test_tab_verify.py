"""``tab.verify`` in a program, in real Chromium: a check that does not hold fails the
iteration by default, even when the program catches the error and completes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.journal import Journal
from tests.programs.conftest import run_program_file, write_program

pytestmark = pytest.mark.browser

MISSING = '{"visible": {"role": "heading", "name": "No such heading"}, "tab": "site"}'
PRESENT = '{"visible": {"role": "heading", "name": "New post"}}'


async def test_a_verify_that_does_not_hold_fails_the_iteration_even_when_caught(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    body = f"""
try:
    await nx.tab("site").verify({MISSING})
except Exception as exc:
    print("caught", type(exc).__name__, exc.code)
await nx.complete()
"""
    outcome = await run_program_file(write_program(tmp_path, body), host, journal, site.base_url)
    assert outcome.status == "failed"
    (result,) = outcome.results
    assert result.reason_code == "PROGRAM_ITERATION_NOT_VERIFIED"
    assert "verify did not hold" in (result.reason or "")
    log = next(tmp_path.rglob("program-1.log")).read_text()
    assert "caught ExpectationFailed EXPECTATION_FAILED" in log


async def test_raise_on_failure_false_only_reads_the_answer(
    tmp_path: Path, host: Any, site: FixtureSite, journal: Journal
) -> None:
    body = f"""
missing = await nx.tab("site").verify({MISSING}, raise_on_failure=False)
present = await nx.tab("site").verify({PRESENT})
print("answers", missing, present)
await nx.complete()
"""
    outcome = await run_program_file(write_program(tmp_path, body), host, journal, site.base_url)
    assert outcome.status == "verified", outcome.results
    log = next(tmp_path.rglob("program-1.log")).read_text()
    assert "answers False True" in log
