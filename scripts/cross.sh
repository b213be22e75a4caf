#!/usr/bin/env bash
# Cross-compiles Herald for the platforms CI cannot run: the Windows desktop
# binary (Wails on Windows needs no cgo) and every package that compiles
# for macOS without cgo (go vet type-checks them for darwin). Packages that
# need cgo on macOS (the tray library, Wails' window) are listed, not vetted.
# The Windows build and vet and the darwin vet run at once (they share no
# build outputs, and on 2 cores one fills the other's waits); each one's
# output is printed when it ends.
# Usage: scripts/cross.sh [output dir for herald.exe, default build/bin]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build/bin}"
mkdir -p "$out"
logs=$(mktemp -d)
trap 'rm -rf "$logs" herald_windows_amd64.syso' EXIT

windows() {
	echo "cross: windows/amd64 desktop binary (icon, manifest and version info from build/windows)"
	# go build links a *_windows_amd64.syso of the main package's folder.
	go run ./brand/winres -arch amd64 -out herald_windows_amd64.syso
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build -tags desktop,production -trimpath \
		-ldflags "-s -w -H windowsgui ${CROSS_LDFLAGS:-}" -o "$out/herald.exe" .
	echo "cross: $out/herald.exe $(stat -c %s "$out/herald.exe") bytes"
	echo "cross: windows/amd64 go vet"
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go vet -tags desktop,production ./...
}

darwin() {
	export GOOS=darwin GOARCH=arm64 CGO_ENABLED=0
	local vet=() skip=() p deps
	# One go list for every package's dependencies, its tests' included
	# (-test: "p [p.test]" and "p_test" variants). A package that needs
	# cgo on macOS, or whose tests do, fails to build without it: skip it.
	local -A bad=()
	while read -r p deps; do
		p=${p%% *}
		p=${p%.test}
		p=${p%_test}
		if grep -qwE 'fyne\.io/systray|github\.com/wailsapp/wails/v2/internal/frontend/desktop/darwin' <<<"$deps"; then
			bad[$p]=1
		fi
	done < <(go list -e -test -f '{{.ImportPath}}{{range .Deps}} {{.}}{{end}}' ./...)
	for p in $(go list ./...); do
		if [ -n "${bad[$p]:-}" ]; then skip+=("$p"); else vet+=("$p"); fi
	done
	echo "cross: darwin/arm64 go vet of ${#vet[@]} packages (cgo-only on macOS, not vetted: ${skip[*]:-none})"
	go vet "${vet[@]}"
}

start=$(date +%s)
windows >"$logs/windows" 2>&1 &
wpid=$!
darwin >"$logs/darwin" 2>&1 &
dpid=$!
rc=0
wait "$wpid" || rc=1
cat "$logs/windows"
wait "$dpid" || rc=1
cat "$logs/darwin"
[ "$rc" -eq 0 ] || { echo "cross: failed" >&2; exit 1; }
echo "cross: ok ($(( $(date +%s) - start ))s)"
