#!/usr/bin/env bash
# Herald's desktop end-to-end test (e2e/desktop_test.go), from a bare
# Debian 12: installs what it needs, then runs `go test ./e2e/` with
# HERALD_E2E=1. Safe to run more than once; uses sudo when not root.
#
# The test builds the frontend (npm run build) and the desktop binary
# (go build -tags desktop,production,webkit2_41), then starts its own
# private Xvfb display and its own private D-Bus session bus (like
# dbus-run-session, but with service activation off so nothing starts
# behind its back, and never the bus of your desktop: it claims
# org.freedesktop.Notifications and org.kde.StatusNotifierWatcher), an
# unlocked gnome-keyring on that bus, and the app. So this script needs no
# xvfb-run or dbus-run-session around it, and it is fine to run it from a
# desktop session.
#
# Usage: e2e/run.sh [go test flags, e.g. -run TestDesktop/tray]
# Environment:
#   HERALD_E2E_NPM_CI=0        keep frontend/node_modules (default: npm ci)
#   HERALD_E2E_BINARY=path     test a prebuilt binary instead of building
#   HERALD_E2E_KEEP=1          keep the temporary directories
# Artifacts (screenshots, logs, summary.txt): e2e/artifacts/
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

pkgs=(
  build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev # the desktop build
  xvfb xauth x11-utils xdotool imagemagick                     # display, key presses, screenshots
  dbus-daemon gnome-keyring libsecret-tools                    # session bus, Secret Service
  tesseract-ocr tesseract-ocr-eng fonts-dejavu-core            # reading the screenshots
  dunst xfce4-panel                                            # a real notification server and tray host
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "e2e: installing ${missing[*]}"
  $SUDO apt-get update -qq || echo "e2e: apt-get update reported errors; trying the install anyway" >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
command -v go >/dev/null || { echo "e2e: Go 1.26 is required (https://go.dev/dl/)" >&2; exit 1; }
command -v npm >/dev/null || { echo "e2e: Node.js and npm are required (apt-get install nodejs npm)" >&2; exit 1; }

if [ "${HERALD_E2E_NPM_CI:-1}" = 1 ] && [ -z "${HERALD_E2E_BINARY:-}" ]; then
  echo "e2e: npm ci"
  (cd frontend && npm ci --no-audit --no-fund)
fi

export HERALD_E2E=1
exec go test -count=1 -v -timeout 15m "$@" ./e2e/
