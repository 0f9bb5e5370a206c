"""The run engine: the only code that starts iterations and dispatches steps.

Owns:

- ``dispatch``: ``StepDispatch``, the host's one way a step goes through (started, in
  flight before the browser acts, dispatched, expectations, finished), for every front end.
- ``requests``: ``build_run_request``, the one run-request builder of every front end.
- ``recorder``: ``JournalRecorder``, a plan's steps written to the journal.
- ``runner``: ``ProgramRunner``, one iteration of a plan against a browser session.
- ``repeat``: ``repeat_program`` and ``RepeatOptions``, the loop with proof.
- ``retry``: bounded second attempts at safe steps (repeat is not retry).
- ``execution``: a run put together (journal, definition guard, runner, repeat, lanes).
- ``definition_guard``: the recipe and selected files a run started with, re-checked.
- ``reconcile`` and ``recovery``: an unknown outcome probed, decided, then resumed.
- ``fixes``: a broken recipe's fix, proposed as a diff and applied only by a person.
- ``monitor_feed``: a run's own actions and observations fed to a BehaviorMonitor.
- ``failpoints``: named pause points for crash tests.

May import: ``northstar.recipe``, ``northstar.plan``, ``northstar.monitor``,
``northstar.journal`` and the shared modules at the top
(``errors``, ``results``, ``browser``, ``logs``, ``redaction``). Never
``browser_adapters`` or Playwright: a browser arrives through the ``northstar.browser``
protocol, wired in by ``northstar.composition``.
"""

__all__: list[str] = []  # import from the modules: loading one stays light
