#!/usr/bin/env bash
# Cross-compiles Herald for the platforms CI cannot run: the Windows desktop
# binary (Wails on Windows needs no cgo) and every package that compiles
# for macOS without cgo (go vet type-checks them for darwin). Packages that
# need cgo on macOS (the tray library, Wails' window) are listed, not vetted.
# Usage: scripts/cross.sh [output dir for herald.exe, default build/bin]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build/bin}"
mkdir -p "$out"

echo "cross: windows/amd64 desktop binary (icon, manifest and version info from build/windows)"
# go build links a *_windows_amd64.syso of the main package's folder.
trap 'rm -f herald_windows_amd64.syso' EXIT
go run ./brand/winres -arch amd64 -out herald_windows_amd64.syso
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build -tags desktop,production -trimpath \
  -ldflags "-s -w -H windowsgui ${CROSS_LDFLAGS:-}" -o "$out/herald.exe" .
echo "cross: $out/herald.exe $(stat -c %s "$out/herald.exe") bytes"

echo "cross: windows/amd64 go vet"
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go vet -tags desktop,production ./...

export GOOS=darwin GOARCH=arm64 CGO_ENABLED=0
vet=() skip=()
for p in $(go list ./...); do
  # A package that needs cgo on macOS fails to build without it: skip it.
  deps="$(go list -e -deps -test -f '{{.ImportPath}}' "$p" 2>/dev/null)"
  if grep -qxE 'fyne\.io/systray|github\.com/wailsapp/wails/v2/internal/frontend/desktop/darwin' <<<"$deps"; then
    skip+=("$p")
  else
    vet+=("$p")
  fi
done
echo "cross: darwin/arm64 go vet of ${#vet[@]} packages (cgo-only on macOS, not vetted: ${skip[*]:-none})"
go vet "${vet[@]}"
echo "cross: ok"
