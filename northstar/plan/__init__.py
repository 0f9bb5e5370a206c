"""Plans: a recipe compiled once per run and rendered once per iteration.

Owns:

- ``model``: the immutable ``Plan``, ``BoundStep`` and ``BoundTab`` the runner and the
  adapter see (they never render a template themselves).
- ``compiler``: ``prepare`` (checks that need no values) and ``bind`` (one iteration).
- ``rendering``: templates, tab roles and their origins, URLs and uploads of one plan.
- ``digests``: the definition hash and a submission's input fingerprint.

May import: ``northstar.recipe``, ``northstar.errors``. Never the run engine, the
journal or a browser.
"""

__all__: list[str] = []  # import from the modules: loading one stays light
