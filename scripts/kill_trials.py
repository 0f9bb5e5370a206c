"""Kill trials of local runs: SIGKILL a run at a random moment or a submit failpoint, then
reconcile and resume it with the CLI, and count what the site received.

    .venv/bin/python scripts/kill_trials.py [--trials 60] [--iterations 3] [--seed 27]

Each trial starts ``northstar run`` of a recipe whose submission is answered in place (a
POST answer that its URL cannot show again) followed by a passive check of that answer and
a ``done_when`` on it: the shape that used to leave runs for a person (``--mark``). The
trials take turns: a failpoint (``before_in_flight``, ``after_in_flight``,
``after_dispatch`` at a random iteration, where the run prints the point and is killed),
a SIGKILL of the run at a random moment 0.5-6 s after it starts (the one deliberate
timer: a random moment is the point), and a SIGKILL of its Chromium at such a moment.
Then ``northstar reconcile`` and ``northstar resume`` until the run is verified, for at
most three rounds (a run left ``needs_review`` would need ``--mark``; none is marked).

All trials share one journal, as runs of one recipe on one site do: its probe is proven
by the first verified submission (a positive control), and a probe never proven cannot
prove an absence. One warm-up run, not killed, goes first so that a kill in the first
trial's first iteration meets a proven probe too; ``--no-warm-up`` leaves it out.

One line per trial, then the totals: duplicates (a title received more than once),
missing (a title never received after recovery) and runs needing ``--mark``. Exit 1 if
any is not 0.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixtures._site_probes import RECEIPT_RECIPE
from fixtures.site_server import FixtureSite
from fixtures.worker_processes import ENTRY, northstar
from northstar import readers
from northstar.run.failpoints import FAILPOINT_ENV, POINTS

# The receipts page's recipe, its submission allowed to be called absent at once.
RECIPE = RECEIPT_RECIPE.replace("    effect: submit\n", "    effect: submit\n    settle: 0\n")

MODES = (*POINTS, "random", "browser")


@dataclass
class Trial:
    number: int
    mode: str
    iteration: int
    prefix: str
    run_id: str = ""
    statuses: tuple[str, ...] = ()
    sent_after_kill: int = 0
    received: int = 0
    duplicates: int = 0
    missing: int = 0
    ended_first: bool = False  # a random moment after the run had ended: nothing killed

    @property
    def needs_mark(self) -> bool:
        return not self.statuses or self.statuses[-1] != "verified"

    def line(self) -> str:
        where = f"@{self.iteration}" if self.mode in POINTS else ""
        late = " (run ended before the kill)" if self.ended_first else ""
        return (
            f"{self.number:>3} {self.mode + where:<19} {self.run_id:<15} sent after kill "
            f"{self.sent_after_kill}, then {' -> '.join(self.statuses) or '-'}; received "
            f"{self.received}, duplicates {self.duplicates}, missing {self.missing}"
            + late
            + ("  NEEDS --mark" if self.needs_mark else "")
        )


def start_run(recipe: Path, prefix: str, site: FixtureSite, journal: Path, env: dict[str, str],
              iterations: int) -> subprocess.Popen[str]:  # fmt: skip
    """``northstar run`` as a child process, its stderr read line by line."""
    return subprocess.Popen(
        [sys.executable, "-c", ENTRY, "run", str(recipe), "-p", f"prefix={prefix}",
         "--base-url", site.base_url, "--repeat", str(iterations), "--journal", str(journal)],
        env={**{k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}, **env},
        text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip


def run_id_of(worker: subprocess.Popen[str]) -> str:
    assert worker.stderr is not None
    for line in worker.stderr:
        if "run r-" in line:
            return line.split("run ", 1)[1].split()[0]
    raise RuntimeError("the run ended without naming its run id")


def wait_for_line(worker: subprocess.Popen[str], needle: str) -> bool:
    assert worker.stderr is not None
    return any(needle in line for line in worker.stderr)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc): the run's own browser and its helpers."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def browser_of(pid: int) -> list[int]:
    """The run's Chromium processes (the top one is enough to kill the browser)."""
    chromium = []
    for child in descendants(pid):
        try:
            cmdline = (Path("/proc") / str(child) / "cmdline").read_bytes()
        except OSError:
            continue
        if b"chrom" in cmdline and b"--type=" not in cmdline:
            chromium.append(child)
    return chromium


def kill(trial: Trial, worker: subprocess.Popen[str], chooser: random.Random) -> None:
    """Kill the run (or its browser) the trial's way, then whatever of its group is left."""
    if trial.mode in POINTS:
        wait_for_line(worker, f"failpoint {trial.mode} {trial.iteration}")
        worker.send_signal(signal.SIGKILL)
    else:
        deadline = time.monotonic() + chooser.uniform(0.5, 6.0)
        while time.monotonic() < deadline and worker.poll() is None:
            time.sleep(0.05)  # the random moment is the point of the trial
        trial.ended_first = worker.poll() is not None
        targets = browser_of(worker.pid) if trial.mode == "browser" else [worker.pid]
        for pid in targets:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    try:
        worker.communicate(timeout=120)  # a run whose browser died ends by itself
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.communicate()
    with suppress(ProcessLookupError):  # its driver and browser: the session it was started in
        os.killpg(worker.pid, signal.SIGKILL)


def recover(run_id: str, prefix: str, site: FixtureSite, journal: Path, folder: Path
            ) -> tuple[str, ...]:  # fmt: skip
    """Reconcile and resume until verified, three rounds at most; the statuses seen."""
    same = ("-p", f"prefix={prefix}", "--base-url", site.base_url, "--journal", str(journal))
    statuses = [readers.get_run(journal, run_id).summary.effective_status]
    for _ in range(3):
        if statuses[-1] == "verified":
            break
        northstar("reconcile", run_id, *same, cwd=folder)
        statuses.append(readers.get_run(journal, run_id).summary.status)
        if statuses[-1] in ("verified", "needs_review"):
            break
        northstar("resume", run_id, *same, cwd=folder)
        statuses.append(readers.get_run(journal, run_id).summary.status)
    return tuple(statuses)


def received(site: FixtureSite, prefix: str) -> Counter[str]:
    return Counter(
        s["title"] for s in site.submissions()
        if s["kind"] == "receipt" and s["title"].startswith(f"{prefix}-")
    )  # fmt: skip


def one_trial(number: int, args: argparse.Namespace, site: FixtureSite, recipe: Path,
              journal: Path, chooser: random.Random) -> Trial:  # fmt: skip
    mode = MODES[number % len(MODES)]
    trial = Trial(number, mode, chooser.randint(1, args.iterations), f"k{number}")
    env = {FAILPOINT_ENV: f"{mode}@{trial.iteration}"} if mode in POINTS else {}
    worker = start_run(recipe, trial.prefix, site, journal, env, args.iterations)
    trial.run_id = run_id_of(worker)
    kill(trial, worker, chooser)
    trial.sent_after_kill = sum(received(site, trial.prefix).values())
    trial.statuses = recover(trial.run_id, trial.prefix, site, journal, recipe.parent)
    counts = received(site, trial.prefix)
    titles = [f"{trial.prefix}-{n}" for n in range(1, args.iterations + 1)]
    trial.received = sum(counts.values())
    trial.duplicates = sum(count - 1 for count in counts.values() if count > 1)
    trial.missing = sum(1 for title in titles if counts[title] == 0)
    return trial


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--no-warm-up", action="store_true")
    args = parser.parse_args(argv)
    chooser = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kill-trials-") as tmp, FixtureSite() as site:
        folder = Path(tmp)
        recipe = folder / "kill-receipt.yaml"
        recipe.write_text(RECIPE, encoding="utf-8")
        journal = folder / "journal.db"
        if not args.no_warm_up:  # its first verified submission proves the probe
            warm = northstar("run", str(recipe), "-p", "prefix=warm", "--base-url",
                             site.base_url, "--journal", str(journal), cwd=folder)  # fmt: skip
            print(f"warm-up run: exit {warm.returncode}", flush=True)
        trials = []
        for number in range(args.trials):
            trials.append(one_trial(number, args, site, recipe, journal, chooser))
            print(trials[-1].line(), flush=True)
    return summary(trials)


def summary(trials: list[Trial]) -> int:
    duplicates = sum(t.duplicates for t in trials)
    missing = sum(t.missing for t in trials)
    marks = sum(t.needs_mark for t in trials)
    by_mode = Counter(t.mode for t in trials)
    late = sum(t.ended_first for t in trials)
    print(
        f"{len(trials)} trials ({', '.join(f'{m} {n}' for m, n in sorted(by_mode.items()))}; "
        f"{late} random moments after the run had ended): duplicates {duplicates}, "
        f"missing {missing}, runs needing --mark {marks}"
    )
    return 1 if duplicates or missing or marks else 0


if __name__ == "__main__":
    sys.exit(main())
