"""Benchmarks that are run by hand or in CI: ``python -m northstar.bench.<name>``.

Each benchmark prints a table by default and a JSON object with ``--json``.
"""
