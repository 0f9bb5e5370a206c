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
.venv/bin/pytest -q "$@"
