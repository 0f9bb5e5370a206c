"""The recipe language: a stored procedure as validated data, and the values it takes.

Owns:

- ``model``: the recipe format (pydantic models; unknown fields rejected).
- ``loader``: YAML to a ``Recipe``, with errors that point at file:line:col.
- ``checks``: what ``prepare`` verifies before any value is known (ids, roles, templates).
- ``templates``: ``{{ name }}`` substitution and nothing else.
- ``params``: coercing raw input to each parameter's declared type.
- ``inputs``: one parameter set per iteration, from ``-p`` or a rows file.

May import: ``northstar.errors`` and the standard library, pydantic, PyYAML. Nothing
here knows about plans, runs, the journal or a browser.
"""

__all__: list[str] = []  # import from the modules: loading one stays light
