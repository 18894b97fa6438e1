#!/usr/bin/env bash
# Installs Chromium from Debian for the UI's browser tests (root only; it
# does nothing when Chromium is present). Without root, the browser tests
# skip with a message, except under CI=true, where they fail.
set -euo pipefail

if command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-browser: not root; the UI's browser tests need Chromium (apt-get install chromium)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
