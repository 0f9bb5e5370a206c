"""A worker's kept sign-ins, in real Chromium: one login for a lane's iterations, handed
over one at a time as a worker gets them, and one more after the site expired the session.

``run_one_iteration`` is what a worker calls per iteration; the server counts logins.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.journal import Journal
from northstar.run.execution import open_run, run_one_iteration
from northstar.run.signin import KeptSignIns
from tests.run.test_sign_in_browser import request_for

pytestmark = pytest.mark.browser


async def test_iterations_handed_over_one_by_one_sign_in_once_and_again_after_an_expiry(
    host: Any, site: FixtureSite, tmp_path: Path
) -> None:
    request = request_for(tmp_path, site, 4)
    kept = KeptSignIns()
    states = []
    with Journal.open(tmp_path / "journal.db") as journal:
        run_id, _ = open_run(request, journal)
        try:
            for number in range(1, 5):
                if number == 3:
                    site.expire_sessions()  # between iterations 2 and 3
                result = await run_one_iteration(
                    request, run_id, number, host=host, journal=journal, kept=kept
                )
                states.append(result.state.value)
            held = kept.state_file(run_id, 1)
            mode = stat.S_IMODE(held.stat().st_mode) if held.exists() else None
            kept.forget_run(run_id)
            forgotten = not held.exists()
        finally:
            kept.close()

    assert states == ["verified"] * 4
    assert site.login_count() == 2  # the first setup, and once more after the expiry
    assert mode == 0o600
    assert forgotten  # the run settled: its state is deleted
    assert not kept.folder.exists()  # the worker exited: its folder is gone
