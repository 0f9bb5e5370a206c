"""Recorded regression cases: record once against a live site, replay offline in pytest.

Owns:

- ``manifest``: the ``case.json`` a recording writes, with secrets kept out.
- ``record_replay``: recording a case live and replaying it with no network (a
  composition root of its own: it wires ``browser_adapters`` in lazily, inside functions).
- ``results``: what a replay found and how a failure is explained.
- ``pytest_plugin``: the ``pytest11`` entry point that makes every case a test.
- ``shared_browser``: the one Chromium of a session's cases, on a loop in its own thread.
- ``recipe_fixture``: ``northstar_recipe``, a recipe run on a Playwright test's own page.

May import: the run engine, ``northstar.composition`` and (lazily) ``browser_adapters``.
Nothing else in the core imports this package.
"""

__all__: list[str] = []  # import from the modules: loading one stays light
