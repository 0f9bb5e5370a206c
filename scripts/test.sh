#!/usr/bin/env bash
# The project's checks: lint, types, the architecture's import contracts, then every test
# (real headless Chromium included).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/lint-imports --no-cache
.venv/bin/pytest -q "$@"
