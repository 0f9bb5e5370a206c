"""``northstar --version`` is the package's version, and the changelog's newest release."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata

from tests.conftest import REPO


def test_the_version_is_the_package_metadata_and_the_newest_changelog_release() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    version = declared["project"]["version"]
    assert metadata.version("northstar") == version
    printed = subprocess.run(
        [sys.executable, "-m", "northstar", "--version"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert printed.stdout == f"northstar, version {version}\n"
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.M)
    assert releases[0] == version
    assert changelog.index("## [Unreleased]") < changelog.index(f"## [{version}]")
