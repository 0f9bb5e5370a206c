"""The BehaviorMonitor and what it reads: observations, fingerprints, screen changes.

Owns:

- ``observation``: a structured, redacted reading of one tab, as plain data.
- ``fingerprints``: when two observations show the same state, two actions the same act.
- ``behavior``: ``BehaviorMonitor``, an advisory ``LoopSignal`` on repetition or stagnation.
- ``screen_change``: what appeared, disappeared and changed between two observations.
- ``rendering``: an observation, or a screen change, as compact text for a model.
- ``positions``: where a tab's nodes differ from its previous reading's, so the readers above
  redo their work for those positions alone.

Pure decisions over plain data: no I/O, no browser. May import ``northstar.recipe``,
``northstar.errors`` and ``northstar.redaction``. Feeding a run's steps to the monitor is
the run engine's job (``northstar.run.monitor_feed``).
"""

__all__: list[str] = []  # import from the modules: loading one stays light
