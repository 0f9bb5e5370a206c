"""Lint: advice about recipes that are valid but fragile (``northstar lint``, ``validate``).

Owns:

- ``rules``: the rules, pure functions from a validated ``Recipe`` to findings, and the
  stable warning codes (``CODES``).
- ``files``: reading a recipe file, running the rules, placing each finding at its
  ``file:line:column`` through the loader's position index, and the one-line format.
- ``_walk``: walking a recipe's targets and texts with their field paths.

May import: ``northstar.recipe``, ``northstar.plan`` (the checks a file must pass before
it is linted), ``northstar.errors``. Never the run engine, the journal or a browser: lint
reads files and nothing else.
"""

__all__: list[str] = []  # import from the modules: loading one stays light
