#!/usr/bin/env bash
# Installs the tools the integration tests drive, so that `cargo nextest run` finds them:
# Python tools from PyPI (tests/requirements.txt), Node tools from npm (tests/npm, at the
# versions of its package-lock.json) and, when it is missing, Debian's chromium package
# for the tests that render HTML and Mermaid charts in a real browser.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -r tests/requirements.txt
npm ci --prefix tests/npm --no-audit --no-fund
if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends chromium
fi
