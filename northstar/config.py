"""Project configuration: each setting from a flag, the environment, the project file or default.

Precedence, highest first, the same for every setting::

    command-line flag  >  environment variable  >  project file  >  default

"Not set" is ``UNSET``, distinct from ``None``: a layer that was not given (no flag, an
unset or empty variable, no key in the file) passes to the next, while ``None`` is a value
(the default "no base URL"). ``Config.resolve`` says which layer a value came from.

The project file is the nearest ``northstar.toml`` or ``pyproject.toml`` with a
``[tool.northstar]`` table, looking from the current folder up to the file system's root
(a ``northstar.toml`` wins over a ``pyproject.toml`` in the same folder); its settings are
plain keys (``base_url = "http://127.0.0.1:8000"``) and a ``[lint]`` table
(``[tool.northstar.lint]`` in ``pyproject.toml``). A key the project file does not know,
or a value of the wrong type, is ``CONFIG_INVALID`` naming the file and the key.

Configuration enters once, at the edge (the CLI's options resolve through it; the run
request is built from what they resolved); nothing deeper reads the environment for these
settings. This module imports nothing of Northstar but its errors.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from northstar.errors import ConfigInvalid

__all__ = [
    "PROJECT_FILES",
    "SETTINGS",
    "UNSET",
    "Config",
    "ProjectFile",
    "Resolved",
    "Setting",
    "Unset",
    "find_project_file",
    "load_config",
]


class Unset:
    """The type of ``UNSET``: a layer that gave no value (``None`` is a value)."""

    _instance: Unset | None = None

    def __new__(cls) -> Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Final = Unset()
Source = Literal["flag", "environment", "project file", "default"]


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("a text")
    return value


def _milliseconds(value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 600_000:
        raise TypeError("a whole number of milliseconds from 1 to 600000")
    return value


def _codes(value: Any) -> tuple[str, ...]:
    """A list of rule codes, or (from the environment) one text of codes split by commas."""
    if isinstance(value, str):
        value = [part for part in value.replace(" ", ",").split(",") if part]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise TypeError("a list of rule codes")
    return tuple(value)


@dataclass(frozen=True)
class Setting:
    """One setting: its key in the project file, its variable, its default and its type."""

    key: str  # `lint.select` is `select` in the file's [lint] table
    env: str
    default: Any
    parse: Callable[[Any], Any]
    help: str


SETTINGS: dict[str, Setting] = {
    setting.key: setting
    for setting in (
        Setting("base_url", "NORTHSTAR_BASE_URL", None, _text, "Value of {{ base_url }}."),
        Setting("browser", "NORTHSTAR_BROWSER", None, _text, "Chromium executable to launch."),
        Setting(
            "journal",
            "NORTHSTAR_JOURNAL",
            None,
            _text,
            "Journal: a file (default .northstar/journal.db) or a postgresql:// URL.",
        ),
        Setting(
            "timeout",
            "NORTHSTAR_TIMEOUT",
            None,
            _milliseconds,
            "Time limit of a step (ms) in recipes that set no `timeout` (else 10000).",
        ),
        Setting("lint.select", "NORTHSTAR_LINT_SELECT", (), _codes, "Lint only these codes."),
        Setting("lint.ignore", "NORTHSTAR_LINT_IGNORE", (), _codes, "Lint codes left out."),
    )
}
PROJECT_FILES = ("northstar.toml", "pyproject.toml")


@dataclass(frozen=True)
class Resolved:
    """A setting's value and where it came from (``origin`` names the variable or file)."""

    value: Any
    source: Source
    origin: str


@dataclass(frozen=True)
class ProjectFile:
    """The project's settings by key (``lint.select``); ``path`` is ``None`` without a file."""

    path: Path | None
    values: Mapping[str, Any]


def find_project_file(start: Path | None = None) -> ProjectFile:
    """The nearest project file from ``start`` (default: the current folder) upwards."""
    folder = (start or Path.cwd()).resolve()
    for here in (folder, *folder.parents):
        for name in PROJECT_FILES:
            found = _read_table(here / name)
            if found is not None:
                return ProjectFile(here / name, _flatten(found, here / name))
    return ProjectFile(None, {})


def _read_table(path: Path) -> dict[str, Any] | None:
    """The file's Northstar table, or ``None`` when the file or the table is not there."""
    if not path.is_file():
        return None
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigInvalid(
            f"{path}: cannot read it as TOML: {exc}", fix="Correct the file's TOML syntax."
        ) from None
    if path.name == "northstar.toml":
        return document
    table = document.get("tool", {}).get("northstar")
    return table if isinstance(table, dict) else None


def _flatten(table: Mapping[str, Any], path: Path) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            values.update({f"{key}.{inner}": item for inner, item in value.items()})
        else:
            values[key] = value
    unknown = sorted(set(values) - set(SETTINGS))
    if unknown:
        raise ConfigInvalid(
            f"{path}: unknown setting {unknown[0]!r}",
            fix=f"Use one of: {', '.join(SETTINGS)} (lint.* in a [lint] table).",
        )
    return values


class Config:
    """Resolves settings for one command: the project file read once, the environment given."""

    def __init__(self, project: ProjectFile, environ: Mapping[str, str]) -> None:
        self.project = project
        self._environ = environ

    def resolve(self, name: str, flag: Any = UNSET) -> Resolved:
        """The value of setting ``name``: ``flag`` (unless ``UNSET``), then the variable,
        then the project file, then the default."""
        setting = SETTINGS[name]
        if flag is not UNSET:
            return Resolved(self._parse(setting, flag, "the flag"), "flag", name)
        variable = self._environ.get(setting.env, "")
        if variable != "":
            return Resolved(self._parse(setting, variable, setting.env), "environment", setting.env)
        if name in self.project.values:
            file = str(self.project.path)
            value = self._parse(setting, self.project.values[name], f"{file} ({name})")
            return Resolved(value, "project file", file)
        return Resolved(setting.default, "default", name)

    def value(self, name: str, flag: Any = UNSET) -> Any:
        return self.resolve(name, flag).value

    @staticmethod
    def _parse(setting: Setting, raw: Any, where: str) -> Any:
        try:
            return setting.parse(raw)
        except TypeError as exc:
            raise ConfigInvalid(
                f"{setting.key} from {where} must be {exc}, not {raw!r}",
                fix=f"Give {setting.key} as {exc}.",
            ) from None


def load_config(start: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """The configuration of the project around ``start`` (default: the current folder)."""
    return Config(find_project_file(start), os.environ if environ is None else environ)
