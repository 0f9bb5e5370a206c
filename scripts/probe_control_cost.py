"""What a positive control of a reconcile probe costs: its time against the fixture site.

    .venv/bin/python scripts/probe_control_cost.py [--controls 10]

Publishes one post with ``recipes/publish-post.yaml`` against the fixture site (in this
process, one headless Chromium), then runs that submission's probe as a positive control
``--controls`` times (each in a new read-only context, as a run does) and prints the
median and the slowest, and the time of the iteration itself for comparison. A control
runs once per run by default, so its cost is added once, not per iteration.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from browser_adapters import PlaywrightHost
from fixtures.site_server import FixtureSite
from northstar.browser.settings import BrowserSettings
from northstar.cli._inputs import build_request
from northstar.journal import Journal
from northstar.plan.compiler import bind
from northstar.run.execution import execute_run
from northstar.run.identity import RunIdentity
from northstar.run.probe_controls import run_control

RECIPE = Path(__file__).resolve().parent.parent / "recipes" / "publish-post.yaml"


async def measure(controls: int) -> None:
    with FixtureSite() as site, tempfile.TemporaryDirectory() as folder:
        request = build_request(
            {"recipe": str(RECIPE), "params": ("title=Cost 1",), "base_url": site.base_url}
        )
        async with PlaywrightHost(BrowserSettings()) as host:
            with Journal.open(Path(folder) / "journal.db") as journal:
                started = time.perf_counter()
                outcome = await execute_run(request, host=host, journal=journal)
                run_s = time.perf_counter() - started
                plan = bind(request.compiled, request.row_for(1), base_url=site.base_url)
                times = []
                for _ in range(controls):
                    began = time.perf_counter()
                    proven = await run_control(
                        plan,
                        "publish",
                        run_id=outcome.run_id,
                        definition_hash=request.compiled.recipe_hash,
                        base_url=site.base_url,
                        host=host,
                        identity=RunIdentity(),
                        journal=journal,
                    )
                    times.append(time.perf_counter() - began)
                    assert proven, "the probe did not find the post it was shown"
    print(
        f"run of 1 iteration (its own control included): {run_s * 1000:.0f} ms; "
        f"{controls} controls: median {statistics.median(times) * 1000:.0f} ms, "
        f"slowest {max(times) * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--controls", type=int, default=10)
    asyncio.run(measure(parser.parse_args().controls))


if __name__ == "__main__":
    main()
