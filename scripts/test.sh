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
# Two test processes (pytest-xdist): each starts its own fixture site, other origin,
# Postgres and Chromium on ephemeral ports, and every test writes in its own temporary
# folder, so nothing is shared; two keep the suite well under 15 minutes on two cores.
# TEST_WORKERS=0 runs it in this one process (a debugger, -x, --pdb).
.venv/bin/pytest -q -n "${TEST_WORKERS:-2}" "$@"
