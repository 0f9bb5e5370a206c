"""The run engine: the only code that starts iterations and dispatches steps.

Owns:

- ``runner``: ``ProgramRunner``, one iteration of a plan against a browser session.
- ``repeat``: ``repeat_program`` and ``RepeatOptions``, the loop with proof.
- ``retry``: bounded second attempts at safe steps (repeat is not retry).
- ``execution``: a run put together (journal, definition guard, runner, repeat, lanes).
- ``definition_guard``: the recipe and selected files a run started with, re-checked.
- ``reconcile`` and ``recovery``: an unknown outcome probed, decided, then resumed.
- ``hooks``: extension points around an iteration (pauses, traces, snapshots).
- ``debug_settings``: the plain settings and decisions behind ``--step`` and ``--trace``.
- ``monitor_feed``: a run's own actions and observations fed to a BehaviorMonitor.
- ``failpoints``: named pause points for crash tests.

May import: ``northstar.recipe``, ``northstar.plan``, ``northstar.monitor``,
``northstar.journal``, ``northstar.readers`` and the shared modules at the top
(``errors``, ``results``, ``browser``, ``logs``, ``redaction``). Never
``browser_adapters`` or Playwright: a browser arrives through the ``northstar.browser``
protocol, wired in by ``northstar.composition``.
"""

__all__: list[str] = []  # import from the modules: loading one stays light
