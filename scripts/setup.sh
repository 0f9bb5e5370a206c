#!/usr/bin/env bash
# Set up Northstar on this machine: a virtualenv in .venv with Northstar and its dev tools,
# and a Chromium to drive. Safe to run again; it only installs what is missing.
#
# Postgres (for the shared-journal tests): the distribution's `postgresql` where missing.
#
# Browser: $NORTHSTAR_BROWSER wins if set; otherwise a system Chromium already on PATH;
# otherwise Debian/Ubuntu's `chromium` package (apt-get, as root or with sudo); otherwise
# Playwright's own download (`playwright install chromium`), which needs internet access.
# Headless runs prefer Chromium's headless shell (several times less CPU per page), so
# Debian's `chromium-headless-shell` is added where apt-get can install it; without it,
# headless runs use the full browser.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
log() { printf 'setup: %s\n' "$*" >&2; }

if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
log "installing northstar, its dev tools and the docs builder into .venv"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'

have_browser() {
  if [ -n "${NORTHSTAR_BROWSER:-}" ]; then [ -x "$NORTHSTAR_BROWSER" ]; return; fi
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null \
    || command -v google-chrome >/dev/null \
    || ls "${PLAYWRIGHT_BROWSERS_PATH:-$HOME/.cache/ms-playwright}"/chromium-*/chrome-linux*/chrome \
      >/dev/null 2>&1
}

have_headless_shell() {
  [ -n "${NORTHSTAR_BROWSER:-}" ] || command -v chromium-headless-shell >/dev/null \
    || command -v chrome-headless-shell >/dev/null \
    || ls -d "${PLAYWRIGHT_BROWSERS_PATH:-$HOME/.cache/ms-playwright}"/chromium_headless_shell-* \
      >/dev/null 2>&1
}

APT_UPDATED=""
install_with_apt() {  # install_with_apt PACKAGE...
  command -v apt-get >/dev/null || return 1
  local sudo=""
  if [ "$(id -u)" != 0 ]; then command -v sudo >/dev/null || return 1; sudo="sudo"; fi
  log "installing $* with apt-get"
  if [ -z "$APT_UPDATED" ]; then $sudo apt-get update -qq && APT_UPDATED=1 || return 1; fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if have_browser; then
  log "browser: found"
elif install_with_apt chromium chromium-headless-shell && have_browser; then
  log "browser: installed the distribution's chromium and its headless shell"
elif .venv/bin/playwright install chromium; then
  log "browser: installed Playwright's chromium"
else
  log "no Chromium could be installed: install one and set NORTHSTAR_BROWSER=/path/to/chrome"
  exit 1
fi
if have_headless_shell; then
  log "headless shell: found"
elif install_with_apt chromium-headless-shell && have_headless_shell; then
  log "headless shell: installed the distribution's chromium-headless-shell"
else
  log "headless shell: not available; headless runs use the full browser (slower)"
fi
# Postgres: only for the tests and demos of a shared journal (a throwaway cluster made
# with initdb/pg_ctl); the embedded journal is SQLite and needs nothing.
have_postgres() {
  command -v initdb >/dev/null && command -v pg_ctl >/dev/null && return
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}
if have_postgres; then
  log "postgres: found"
elif install_with_apt postgresql && have_postgres; then
  log "postgres: installed the distribution's postgresql"
else
  log "postgres: not available; the Postgres journal tests will be skipped"
fi
log "done: .venv/bin/northstar is ready"
