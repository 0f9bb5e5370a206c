"""Authoring recipes without typing them: a Playwright codegen recording to a recipe.

Owns reading a ``playwright codegen --target python-async`` script with ``ast`` (never
running it), converting it to recipe YAML with comments (``importer``), and the argv and
environment that start Playwright's recorder (``recorder``). A core part with no front
end: it may import ``northstar.recipe`` and the shared modules (``errors``,
``redaction``), never the run engine, the browser protocol, ``browser_adapters`` or
Playwright. The CLI (``northstar import-codegen``, ``northstar codegen``) drives it.
"""

from __future__ import annotations

from northstar.authoring.importer import ImportedRecipe, import_codegen

__all__ = ["ImportedRecipe", "import_codegen"]
