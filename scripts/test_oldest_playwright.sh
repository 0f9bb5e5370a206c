#!/usr/bin/env bash
# CI's second, small job: Northstar's browser tests against the OLDEST Playwright it
# supports (pyproject says `playwright>=OLDEST`; scripts/setup.sh's .venv has the newest).
#
# .venv-oldest holds only that Playwright (and its own dependencies); everything else comes
# from .venv, added after it on sys.path, so the one thing that differs is Playwright.
# Usage: bash scripts/test_oldest_playwright.sh [pytest args]  (default: the adapter's tests)
set -euo pipefail
cd "$(dirname "$0")/.."

OLDEST=$(sed -n 's/^ *"playwright>=\([0-9.]*\)",*$/\1/p' pyproject.toml)
[ -n "$OLDEST" ] || { echo "no playwright>=X.Y in pyproject.toml" >&2; exit 1; }
PYTHON=.venv/bin/python
if [ ! -x .venv-oldest/bin/python ] || ! .venv-oldest/bin/python -c \
    "import importlib.metadata as m, sys; sys.exit(m.version('playwright') != '$OLDEST')" \
    2>/dev/null; then
  rm -rf .venv-oldest
  "$PYTHON" -m venv .venv-oldest
  .venv-oldest/bin/python -m pip install --quiet --disable-pip-version-check \
    "playwright==$OLDEST"
fi
SITE=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
OWN=$(.venv-oldest/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# addsitedir (not a plain path) so .venv's own .pth files (the editable install) apply too.
echo "import site; site.addsitedir('$SITE')" > "$OWN/northstar-dev-venv.pth"
.venv-oldest/bin/python - "$OLDEST" <<'EOF'
import importlib.metadata, sys
found = importlib.metadata.version("playwright")
assert found == sys.argv[1], f"playwright {found} is not the oldest supported {sys.argv[1]}"
print(f"oldest supported Playwright: {found}")
EOF
if [ "$#" -eq 0 ]; then
  set -- tests/browser/test_step_kinds.py tests/browser/test_targets.py \
    tests/browser/test_observation_capture.py tests/browser/test_origin_guard.py \
    tests/browser/test_debugging.py tests/cases/test_pytest_playwright.py
fi
.venv-oldest/bin/python -m pytest -q "$@"
