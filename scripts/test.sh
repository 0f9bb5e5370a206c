#!/usr/bin/env bash
# The project's checks: lint, types, the architecture's import contracts, the documentation
# site (strict: a broken link, anchor or generated page fails it), then every test (real
# headless Chromium included).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/lint-imports --no-cache
site_dir=$(mktemp -d)
trap 'rm -rf "$site_dir"' EXIT
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site_dir"
# Three test processes (pytest-xdist) on two cores: most tests wait on a browser or a
# child process, so a third keeps the cores busy; work stealing spreads the long tests
# (kill trials, workers on Postgres) instead of leaving them queued behind one process.
# Each process starts its own fixture site, other origin, Postgres and Chromium on
# ephemeral ports, and every test writes in its own temporary folder: nothing is shared.
# TEST_WORKERS=0 runs it in this one process (a debugger, -x, --pdb).
.venv/bin/pytest -q -n "${TEST_WORKERS:-3}" --dist worksteal "$@"
