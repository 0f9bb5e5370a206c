#!/usr/bin/env bash
# The project's checks: lint, types, then every test (real headless Chromium included).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/pytest -q "$@"
