#!/usr/bin/env bash
# Headless Chromium for the test that reads the documentation site in a real browser (tests/test_docs_browser.py:
# screenshots, and the pages' DOM after their scripts ran).  Only `make test` needs it (test-setup), not the package.
#
# Chromium is Debian's package (apt-get install chromium, as root; about 290 MB installed).  Writes .stamps/chromium:
# "installed" (make test then requires the browser test: AG_ATTENTION_REQUIRE_CHROMIUM=1) or "unavailable: REASON"
# (the test is skipped, saying why).
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .stamps
say() { echo "[setup-browser] $*"; }
found() { command -v chromium || command -v chromium-browser || command -v google-chrome; }
if browser=$(found); then
  echo installed > .stamps/chromium
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  reason="no Chromium on PATH, and no root or no apt-get to install it (apt-get install chromium)"
  say "$reason: the browser test of the documentation is skipped"
  echo "unavailable: $reason" > .stamps/chromium
  exit 0
fi
say "apt-get install chromium (the documentation's browser test)"
if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
  >/dev/null; } && browser=$(found); then
  say "$("$browser" --version 2>/dev/null | head -1) at $browser"
  echo installed > .stamps/chromium
else
  reason="apt-get install chromium failed (above)"
  say "$reason: the browser test of the documentation is skipped"
  echo "unavailable: $reason" > .stamps/chromium
fi
exit 0
