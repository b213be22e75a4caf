#!/usr/bin/env bash
# CI's packaging check (make package-check): the desktop entry validates,
# `make install` / `make uninstall` round-trip in a temporary home, the
# tarball and the .deb hold what they should, and (as root, where dpkg
# works) the .deb installs, puts Herald in the app menu, runs, and removes
# cleanly. Usage: scripts/package-check.sh HERALD.deb HERALD.tar.gz
set -euo pipefail
cd "$(dirname "$0")/.."
deb="$1" tarball="$2"
fail() { echo "package-check: $*" >&2; exit 1; }
command -v desktop-file-validate >/dev/null || fail "desktop-file-validate is missing: run scripts/deps.sh (Debian package desktop-file-utils)"

desktop-file-validate build/linux/herald.desktop
sizes="16 22 24 32 48 64 128 256 512"

icons_in() { # $1: an icons/ folder
  for n in $sizes; do [ -s "$1/hicolor/${n}x${n}/apps/herald.png" ] || fail "no ${n}x${n} icon in $1"; done
  [ -s "$1/hicolor/scalable/apps/herald.svg" ] || fail "no scalable icon in $1"
}

# make install / make uninstall in a temporary home.
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
HOME="$home" make --no-print-directory install >/dev/null
entry="$home/.local/share/applications/herald.desktop"
[ -x "$home/.local/bin/herald" ] || fail "make install left no binary in ~/.local/bin"
[ -x "$home/.local/bin/herald-window" ] || fail "make install left no herald-window (the window program) next to herald"
desktop-file-validate "$entry"
grep -qx "Exec=$home/.local/bin/herald" "$entry" || fail "the installed entry does not start the installed binary: $(grep ^Exec= "$entry")"
grep -qx "Icon=herald" "$entry" || fail "the installed entry has no Icon=herald"
icons_in "$home/.local/share/icons"
HOME="$home" make --no-print-directory uninstall >/dev/null
left="$(find "$home" -type f -name 'herald*')"
[ -z "$left" ] || fail "make uninstall left: $left"
echo "package-check: make install and uninstall round-trip in a temporary home"

# The tarball: a prefix tree.
list="$(tar -tzf "$tarball")"
for f in bin/herald bin/herald-window share/applications/herald.desktop share/icons/hicolor/48x48/apps/herald.png share/icons/hicolor/scalable/apps/herald.svg; do
  grep -q "^herald-[^/]*/$f\$" <<<"$list" || fail "$tarball lacks $f"
done
echo "package-check: $tarball ($(stat -c %s "$tarball") bytes) holds the binary, the entry and the icons"

# The .deb's metadata and files.
info="$(dpkg-deb --info "$deb")"
grep -q "Depends: .*libgtk-3-0.*libwebkit2gtk-4.1-0" <<<"$info" || fail "the .deb does not depend on GTK 3 and WebKitGTK 4.1"
files="$(dpkg-deb --contents "$deb")"
for f in ./usr/bin/herald ./usr/bin/herald-window ./usr/share/applications/herald.desktop ./usr/share/icons/hicolor/256x256/apps/herald.png; do
  grep -q " $f\$" <<<"$files" || fail "the .deb lacks $f"
done
if grep -v '^d' <<<"$files" | grep -qv ' root/root '; then fail "the .deb has files not owned by root"; fi
echo "package-check: $deb ($(stat -c %s "$deb") bytes) holds the binary, the entry and the icons"

if [ "$(id -u)" -ne 0 ]; then
  echo "package-check: not root: the .deb install check is left to CI"
  exit 0
fi
dpkg -i "$deb" >/dev/null || { apt-get install -f -y -qq >/dev/null; dpkg -i "$deb"; }
dpkg-query -W -f='${Status}\n' herald | grep -q "install ok installed" || fail "dpkg did not install herald"
desktop-file-validate /usr/share/applications/herald.desktop
icons_in /usr/share/icons
exec_line="$(sed -n 's/^Exec=//p' /usr/share/applications/herald.desktop)"
cmd="$(command -v "${exec_line%% *}")" || fail "the entry's Exec=$exec_line is not on PATH"
out="$(env -u DISPLAY -u WAYLAND_DISPLAY "$cmd" version)" || fail "$cmd version failed"
echo "package-check: the .deb installed; $cmd version: $out"
dpkg -r herald >/dev/null
[ ! -e /usr/bin/herald ] && [ ! -e /usr/bin/herald-window ] && [ ! -e /usr/share/applications/herald.desktop ] || fail "dpkg -r herald left files behind"
echo "package-check: ok"
