#!/usr/bin/env bash
# Proves the README's quick start on a fresh Debian 12 that has only Go:
# debootstraps a minimal bookworm into ROOT (once), copies Go and a clean
# clone of this checkout into it, installs make (which a minimal Debian
# lacks), then runs, in the chroot, what `make run` does before it starts
# the window (make deps build) and the frontend's tests (make ui-test).
# Debian 12's own Node is 18, which vite 8 cannot run: deps.sh must bring
# its own. As root; takes about 10 minutes, mostly downloads.
#
#   sudo scripts/fresh-debian12.sh /tmp/deb12   # then see ROOT/herald.log
set -euo pipefail
ROOT="${1:?usage: scripts/fresh-debian12.sh ROOT (a folder for the chroot)}"
SRC="$(cd "$(dirname "$0")/.." && pwd)"
GOROOT_HOST="$(go env GOROOT)"
if [ ! -x "$ROOT/bin/bash" ]; then
  command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap
  debootstrap --variant=minbase bookworm "$ROOT" http://deb.debian.org/debian
fi
echo "deb http://deb.debian.org/debian-security bookworm-security main" > "$ROOT/etc/apt/sources.list.d/security.list"
rm -rf "$ROOT/usr/local/go" "$ROOT/src/herald"
cp -a "$GOROOT_HOST" "$ROOT/usr/local/go"
mkdir -p "$ROOT/src"
git clone -q "$SRC" "$ROOT/src/herald"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# This machine's own certificate authorities (a TLS proxy's, say), so the
# chroot reaches the registries the way the machine does.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$ROOT/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
fi
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
trap 'umount "$ROOT/proc" 2>/dev/null || true' EXIT
chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/go/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c 'set -e
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make ca-certificates >/dev/null
    update-ca-certificates >/dev/null
    cd /src/herald
    echo "== node before: $(command -v node || echo none)"
    make deps build
    make ui-test
    echo "== node used: $(PATH=$PWD/.tools/node/node_modules/.bin:$PATH node --version)"
    ./build/bin/herald version' 2>&1 | tee "$ROOT/herald.log"
