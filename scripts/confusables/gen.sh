#!/usr/bin/env bash
# Regenerates approval/tr39_data.go, the Unicode TR39 data Herald marks
# look-alikes with (approval/confusable.go), from the ICU spoof checker,
# whose data is Unicode's own confusables.txt and IdentifierStatus.txt.
# Needs a C compiler and ICU's headers (Debian: libicu-dev). The file names
# the Unicode and ICU versions it came from; commit it with this script.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# shellcheck disable=SC2046 # pkg-config prints several flags
cc -O2 -o "$TMP/tr39" "$ROOT/scripts/confusables/tr39.c" $(pkg-config --cflags --libs icu-i18n icu-uc)
"$TMP/tr39" > "$TMP/tr39_data.go"
gofmt "$TMP/tr39_data.go" > "$ROOT/approval/tr39_data.go"
echo "wrote approval/tr39_data.go"
