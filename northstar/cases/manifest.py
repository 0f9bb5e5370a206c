"""Recorded regression cases: the ``case.json`` manifest and keeping secrets out of it.

A case is a folder made by ``northstar record``::

    fixtures/cases/contact-form/
        case.json            this manifest
        recording.har        the network of the recorded iteration (Playwright's HAR)
        step-01-name.html    the page after each step, for comparing with a failure
        ...

The manifest names the recipe by its path relative to the project root (the nearest
folder above the case holding ``pyproject.toml``, ``setup.cfg`` or ``.git``), and keeps
the base URL used at recording (a replay answers from the recording, so it uses the
same URLs), the parameters, the outputs the replay must reproduce, the definition hash
and the Northstar version.

Secret values are never written. Wherever one would appear (a parameter, a form body in
the HAR, a page) it is replaced by the marker ``<secret:NAME>``, also in its URL- and
HTML-encoded forms; a replay takes the value from ``-p NAME=...`` or the environment
(``NORTHSTAR_SECRET_NAME``) and puts it back into a private copy of the HAR, so the
replayed form body matches the recorded one.

A case recorded signed in (the recipe's ``setup``, ``--state`` or ``--profile``; the
manifest's ``signed_in`` says which) holds no sign-in: ``setup`` ran in a context of its
own that was not recorded, and every value of the state the recorded context started
from (its cookies, its local storage) is replaced by a ``<secret:signed-in-...>`` marker,
never put back. A replay needs none of it: the recording answers each request by URL,
method and body, whatever cookie the replayed page sends.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, quote_plus

from northstar.errors import ParamMissing, UsageInvalid
from northstar.redaction import contains_secret, secret_matcher

if TYPE_CHECKING:  # the pytest plugin imports this module at start-up: keep it light
    from northstar.recipe.model import Param

__all__ = [
    "CASE_FILE",
    "CASE_KIND",
    "HAR_FILE",
    "RegressionCase",
    "find_case_files",
    "is_case_file",
    "leaked_secrets",
    "load_case",
    "project_root",
    "recorded_params",
    "replay_params",
    "restore_secrets",
    "scrub_secrets",
    "secret_env_var",
    "secret_marker",
    "signed_in_values",
    "snapshot_file_name",
]

CASE_FILE = "case.json"
HAR_FILE = "recording.har"
CASE_KIND = "northstar-regression-case"
CASE_FORMAT = 1
_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", ".git")
# Shorter state values (a "1", a theme) are no credential, and replacing them everywhere
# in a recording would change the pages it replays.
_MIN_STATE_VALUE = 8


@dataclass(frozen=True)
class RegressionCase:
    """What ``case.json`` says about one recorded case."""

    name: str
    recipe: str  # relative to the project root (POSIX separators)
    base_url: str | None
    params: dict[str, Any]  # secret ones hold their marker
    secret_params: tuple[str, ...]
    outputs: dict[str, str]
    definition_hash: str
    northstar_version: str
    recorded_at: str
    har: str = HAR_FILE
    snapshots: dict[str, str] = field(default_factory=dict)  # step id -> HTML file
    # What the recorded iteration started signed in from: "setup" (the recipe's, run in a
    # context that was not recorded), "state" (--state), "profile" (--profile), or None.
    signed_in: str | None = None

    def to_json(self) -> str:
        body = {"kind": CASE_KIND, "format": CASE_FORMAT, **asdict(self)}
        body["secret_params"] = list(self.secret_params)
        return json.dumps(body, indent=2, sort_keys=False) + "\n"


def load_case(path: Path) -> RegressionCase:
    """Read a ``case.json`` (or the folder holding one); a clear error if it is not one."""
    file = path / CASE_FILE if path.is_dir() else path
    try:
        body = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageInvalid(
            f"{file}: not a readable regression case ({exc.__class__.__name__})",
            fix="Point at a folder made by `northstar record` (it holds case.json).",
        ) from exc
    if not isinstance(body, dict) or body.get("kind") != CASE_KIND:
        raise UsageInvalid(f"{file} is not a Northstar regression case")
    if body.get("format") != CASE_FORMAT:
        raise UsageInvalid(
            f"{file} has case format {body.get('format')!r}; this Northstar reads {CASE_FORMAT}",
            fix="Record the case again with this version.",
        )
    fields = {k: v for k, v in body.items() if k not in ("kind", "format")}
    try:
        case = RegressionCase(**fields)
    except TypeError as exc:
        raise UsageInvalid(f"{file}: {exc}", fix="Record the case again.") from exc
    return RegressionCase(**{**asdict(case), "secret_params": tuple(case.secret_params)})


def is_case_file(path: Path) -> bool:
    """A ``case.json`` that says it is a Northstar case (other projects' files are left alone)."""
    if path.name != CASE_FILE or not path.is_file():
        return False
    try:
        return f'"kind": "{CASE_KIND}"' in path.read_text(encoding="utf-8")[:200]
    except (OSError, UnicodeDecodeError):
        return False


def find_case_files(folder: Path) -> list[Path]:
    """Every case under ``folder``, in name order."""
    return sorted(p for p in folder.rglob(CASE_FILE) if is_case_file(p))


def project_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` that holds a project marker, else ``start``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in _ROOT_MARKERS):
            return folder
    return start


def snapshot_file_name(index: int, step_id: str) -> str:
    """``step-03-send.html`` for the third step (``index`` counts from 0)."""
    return f"step-{index + 1:02d}-{step_id}.html"


# Parameters


def secret_marker(name: str) -> str:
    return f"<secret:{name}>"


def secret_env_var(name: str) -> str:
    """Where a replay finds a secret parameter's value: ``NORTHSTAR_SECRET_PASSWORD``."""
    return "NORTHSTAR_SECRET_" + re.sub(r"[^A-Z0-9]", "_", name.upper())


def recorded_params(
    specs: Mapping[str, Param], values: Mapping[str, Any], root: Path
) -> dict[str, Any]:
    """The parameter values as the manifest keeps them: secrets as markers, files relative."""
    kept: dict[str, Any] = {}
    for name, value in values.items():
        spec = specs.get(name)
        if spec is not None and spec.secret:
            kept[name] = secret_marker(name)
        elif spec is not None and spec.type == "file" and value:
            kept[name] = _relative_to(Path(str(value)), root)
        else:
            kept[name] = value
    return kept


def replay_params(
    case: RegressionCase,
    specs: Mapping[str, Param],
    root: Path,
    given: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Raw values for a replay: the recorded ones, ``given`` winning, secrets from outside."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for name, value in case.params.items():
        spec = specs.get(name)
        if spec is not None and spec.type == "file" and value:
            value = str(root / str(value))
        values[name] = value
    values.update(given)
    for name in case.secret_params:
        if values.get(name) == secret_marker(name):
            if not environ.get(secret_env_var(name)):
                raise ParamMissing(
                    f"the case {case.name!r} needs the secret parameter {name!r}; "
                    "its value was never recorded",
                    fix=f"Set {secret_env_var(name)} or pass -p {name}=VALUE.",
                )
            values[name] = environ[secret_env_var(name)]
    return values


def _relative_to(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


# Secret markers in recorded content


_ENCODINGS: tuple[Callable[[str], str], ...] = (
    lambda text: quote_plus(text, safe=""),
    lambda text: quote(text, safe=""),
    lambda text: html.escape(text, quote=True),
    lambda text: text,
)


def scrub_secrets(value: Any, secrets: Mapping[str, str]) -> Any:
    """``value`` (JSON-like) with each secret, in each encoding, replaced by its marker.

    The encodings a replay can put back come first; any other form of the secret
    (``northstar.redaction`` knows them all) becomes the plain marker, never restored.
    """
    pairs = [
        (enc(v), enc(secret_marker(n)))
        for n, v in _longest_first(secrets)
        for enc in _ENCODINGS
        # An encoding that leaves the value as it is would encode a raw one's marker.
        if enc(v) != v or enc(secret_marker(n)) == secret_marker(n)
    ]
    others = [(secret_matcher([v]), secret_marker(n)) for n, v in _longest_first(secrets)]

    def scrub(text: str) -> str:
        for old, new in pairs:
            text = text.replace(old, new)
        for pattern, marker in others:
            text = pattern.sub(marker, text) if pattern is not None else text
        return text

    return _replace_everywhere(value, scrub)


def restore_secrets(value: Any, secrets: Mapping[str, str]) -> Any:
    """The reverse of ``scrub_secrets``: each marker back to the secret it stands for."""
    pairs = [
        (enc(secret_marker(n)), enc(v)) for n, v in _longest_first(secrets) for enc in _ENCODINGS
    ]

    def restore(text: str) -> str:
        for old, new in pairs:
            text = text.replace(old, new)
        return text

    return _replace_everywhere(value, restore)


def leaked_secrets(texts: Iterable[str], secrets: Mapping[str, str]) -> list[str]:
    """Names of the secrets whose value (in any form) still appears in ``texts``."""
    found = set()
    for text in texts:
        for name, value in secrets.items():
            if value and contains_secret(text, [value]):
                found.add(name)
    return sorted(found)


def signed_in_values(state: Mapping[str, Any]) -> dict[str, str]:
    """A storage state's cookie and local-storage values, named for their markers.

    They are scrubbed from a case like secrets (and never restored): the state holds a
    live session, and a case is a file to share.
    """
    found: dict[str, str] = {}
    items = [("cookie", c) for c in state.get("cookies", [])] + [
        ("storage", item)
        for origin in state.get("origins", [])
        for item in origin.get("localStorage", [])
    ]
    for kind, item in items:
        value = str(item.get("value", ""))
        if len(value) >= _MIN_STATE_VALUE:
            name = f"signed-in-{kind}-{item.get('name', '')}"
            found[name if name not in found else f"{name}-{len(found)}"] = value
    return found


def _longest_first(secrets: Mapping[str, str]) -> list[tuple[str, str]]:
    return sorted(((n, v) for n, v in secrets.items() if v), key=lambda nv: -len(nv[1]))


def _replace_everywhere(value: Any, replace: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return replace(value)
    if isinstance(value, list):
        return [_replace_everywhere(item, replace) for item in value]
    if isinstance(value, dict):
        if value.get("encoding") == "base64" and isinstance(value.get("text"), str):
            return {**value, "text": _replace_in_base64(value["text"], replace)}
        return {k: _replace_everywhere(v, replace) for k, v in value.items()}
    return value


def _replace_in_base64(text: str, replace: Callable[[str], str]) -> str:
    """A base64 body (HAR content) is scrubbed too when it decodes to text."""
    try:
        decoded = base64.b64decode(text, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return text  # binary content: an image cannot hold a typed secret
    return base64.b64encode(replace(decoded).encode()).decode()
