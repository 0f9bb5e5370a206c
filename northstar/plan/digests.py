"""The digests a ``Plan`` carries: a submission's input fingerprint and the definition hash.

The input fingerprint tells whether a submission is the same one again (secret values are
hashed before they enter it); the definition hash binds a run to its recipe and to the
bytes of every file an iteration selects.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from northstar.plan.model import BoundStep
from northstar.recipe.model import Recipe, Step
from northstar.recipe.params import file_digest

__all__ = ["definition_hash", "input_fingerprint", "selected_files"]


def input_fingerprint(recipe: Recipe, step: Step, scope: Mapping[str, Any]) -> str:
    """Digest of a submission's rendered inputs, with secret values hashed first."""
    secrets = [
        str(scope[name])
        for name, param in recipe.params.items()
        if param.secret and scope.get(name) not in (None, "")
    ]
    data = _mask_secrets(step.model_dump(mode="json", by_alias=True), secrets)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _mask_secrets(value: Any, secrets: list[str]) -> Any:
    """Replace every secret inside the strings of dumped data with its digest."""
    if isinstance(value, dict):
        return {key: _mask_secrets(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask_secrets(item, secrets) for item in value]
    if isinstance(value, str):
        for secret in sorted(secrets, key=len, reverse=True):
            value = value.replace(secret, _secret_digest(secret))
    return value


def _secret_digest(secret: str) -> str:
    return "sha256:" + hashlib.sha256(secret.encode()).hexdigest()


def selected_files(
    recipe: Recipe, values: Mapping[str, Any], steps: tuple[BoundStep, ...]
) -> tuple[tuple[str, str], ...]:
    """Every file the iteration selects (file params and uploads), with its digest."""
    paths = {str(values[n]) for n, p in recipe.params.items() if p.type == "file" and values.get(n)}
    for bound in steps:
        if bound.step.upload is not None:
            paths.update(bound.step.upload.files)
    return tuple((path, file_digest(path)) for path in sorted(paths))


def definition_hash(recipe_digest: str, files: tuple[tuple[str, str], ...]) -> str:
    text = recipe_digest + "".join(f"\n{path}={digest}" for path, digest in files)
    return hashlib.sha256(text.encode()).hexdigest()
