#!/usr/bin/env bash
# Prints the DEBIAN/control file of Herald's .deb for the staged tree $1.
# Environment: VERSION (Debian version), ARCH (dpkg architecture).
set -euo pipefail
root="$1"
size="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
cat <<CONTROL
Package: herald
Version: ${VERSION:?}
Architecture: ${ARCH:?}
Maintainer: Herald developers <herald-desktop@users.noreply.github.com>
Installed-Size: ${size}
Depends: libc6, libgtk-3-0, libwebkit2gtk-4.1-0
Suggests: gnome-keyring
Section: utils
Priority: optional
Homepage: https://github.com/herald-desktop/herald
Description: live desktop companion for Hermes Agent
 Herald keeps a push channel to your Hermes Agent gateways and API servers,
 shows run events, and surfaces dangerous-command approval requests as
 desktop notifications, a tray menu, a window and a terminal client
 (herald watch, pending, approve, log), then forwards your choice.
CONTROL
