"""Benchmarks that are run by hand or in CI: ``python -m northstar.bench.<name>``.

Each benchmark prints a table by default and a JSON object with ``--json``.

They run from a checkout only: they start the fixture site and the hand-written
Playwright baselines from ``fixtures/``, which the wheel does not ship, so this package
is left out of the wheel too (``[tool.setuptools.packages.find]``).
"""
