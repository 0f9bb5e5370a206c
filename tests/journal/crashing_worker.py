"""A worker for the crash tests: records some steps, then waits to be killed or told to exit.

Run as ``python crashing_worker.py JOURNAL kill|exit``. It prints the run id once its
records are committed, then blocks reading stdin: the test kills it with SIGKILL, or
(``exit``) sends a line and the worker closes the journal and exits 0 without ever
recording the iteration's result.
"""

from __future__ import annotations

import sys

from northstar.journal import Journal
from northstar.results import Evidence, StepResult, StepStatus
from northstar.run.recorder import JournalRecorder
from tests.journal.helpers import create_run, make_plan


def main(path: str) -> None:
    journal = Journal.open(path)
    run_id, _ = create_run(journal, total=3)
    plan = make_plan()
    journal.start_iteration(run_id, 1, params_fingerprint=plan.params_fingerprint)
    recorder = JournalRecorder(journal, run_id)
    for step in plan.steps[:2]:
        recorder.step_started(plan, step)
        evidence = (Evidence("action", step.tab, step.kind, True),)
        result = StepResult(step.id, step.tab, step.kind, StepStatus.PASSED, 1.0, evidence)
        recorder.step_finished(plan, result)
    publish = plan.step("publish")
    recorder.step_started(plan, publish)
    recorder.submit_in_flight(plan, publish)
    print(run_id, flush=True)
    sys.stdin.readline()
    journal.close()


if __name__ == "__main__":
    main(sys.argv[1])
