#!/usr/bin/env bash
# Proves the README's quick start on a fresh Debian 12 that has only Go:
# debootstraps a minimal bookworm into ROOT (once), copies Go and a clean
# clone of this checkout into it, installs make (which a minimal Debian
# lacks), then runs the README's commands in the chroot.
#
#   sudo scripts/fresh-debian12.sh ROOT          # quick: make deps build, make ui-test
#   sudo scripts/fresh-debian12.sh ROOT full     # the README's two commands: make test, make run
#
# quick covers the Node path (Debian 12's own Node is 18, which vite 8
# cannot run: deps.sh must bring its own). full runs `make test` (the whole
# suite, the desktop e2e and the real Hermes servers included) with
# ../shared bind-mounted read-only beside the clone when SHARED (default:
# ../shared next to this checkout) exists, then `make run` for 20 seconds
# on a private Xvfb display (a fresh machine with a desktop has one) and
# checks Herald came up and was still running. As root; quick takes about
# 10 minutes, full about 30 on 2 cores, mostly downloads and compiling.
# The log is ROOT/herald.log; it ends with "fresh-debian12: PASS".
set -euo pipefail
ROOT="${1:?usage: scripts/fresh-debian12.sh ROOT [quick|full] (ROOT: a folder for the chroot)}"
MODE="${2:-quick}"
case "$MODE" in quick | full) ;; *) echo "fresh-debian12: mode is quick or full, not $MODE" >&2; exit 2 ;; esac
SRC="$(cd "$(dirname "$0")/.." && pwd)"
SHARED="${SHARED:-$(cd "$SRC/.." && pwd)/shared}"
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

mounts=()
mnt() { # mnt TARGET MOUNT-ARGS...: mount once, unmount on exit (last first)
  local target="$ROOT$1"; shift
  mkdir -p "$target"
  mountpoint -q "$target" || mount "$@" "$target"
  mounts=("$target" "${mounts[@]}")
}
cleanup() { for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done; }
trap cleanup EXIT
mnt /proc -t proc proc
if [ "$MODE" = full ]; then
  # The browser, Xvfb and the session bus need a real /dev, /dev/shm and /sys.
  mnt /sys -t sysfs sysfs
  mnt /dev --bind /dev
  mnt /dev/pts --bind /dev/pts
  mnt /dev/shm -t tmpfs -o mode=1777 tmpfs
  if [ -d "$SHARED/hermes-peer" ]; then
    mnt /src/shared --bind "$SHARED"
    mount -o remount,bind,ro "$ROOT/src/shared"
  else
    echo "fresh-debian12: $SHARED not found: make test will skip the real Hermes servers" >&2
  fi
fi

chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/go/bin:/usr/sbin:/usr/bin:/sbin:/bin MODE="$MODE" \
  bash -c 'set -eo pipefail
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make ca-certificates >/dev/null
    update-ca-certificates >/dev/null
    cd /src/herald
    echo "== node before: $(command -v node || echo none)"
    if [ "$MODE" = quick ]; then
      make deps build
      make ui-test
    else
      echo "== make test"
      make test
      # make run starts the window, which needs a display: a desktop has
      # one, this chroot gets a private Xvfb and session bus.
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends xvfb xauth dbus-x11 >/dev/null
      echo "== make run (20 s on Xvfb)"
      rc=0
      timeout 20 xvfb-run -a dbus-run-session -- make run >/tmp/make-run.log 2>&1 || rc=$?
      cat /tmp/make-run.log
      # 124: timeout stopped it, so it was still running after 20 s.
      [ "$rc" -eq 124 ] || { echo "== make run exited $rc before 20 s"; exit 1; }
      grep -q "^./build/bin/herald" /tmp/make-run.log || { echo "== make run did not start build/bin/herald"; exit 1; }
    fi
    echo "== node used: $(PATH=$PWD/.tools/node/node_modules/.bin:$PATH node --version)"
    ./build/bin/herald version
    echo "fresh-debian12: PASS ($MODE)"' 2>&1 | tee "$ROOT/herald.log"
