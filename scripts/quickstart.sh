#!/usr/bin/env bash
# First run on a fresh machine: set everything up, then run a real recipe three times
# against the bundled fixture site (served on 127.0.0.1) and show what the journal holds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m fixtures.demo
