#!/usr/bin/env bash
# Herald's memory with the window open: starts the built Herald
# (build/bin/herald, which starts build/bin/herald-window) on a private Xvfb
# display and session bus with empty settings (the first-run page), waits
# until it has been idle IDLE seconds, and sums the PSS of herald and every
# process it started (the window process, WebKit's web and network
# processes, bwrap and xdg-dbus-proxy when WebKit's sandbox is on) as if
# nothing else ran on the machine (scripts/pss; run as root for that,
# otherwise it is the kernel's PSS, which other WebKit processes and X
# servers lower). Prints one line per process (with how much of it is
# heaps and stacks rather than programs and libraries), a total with the
# load average, and a markdown row for BENCHMARKS.md.
#
# Usage: scripts/footprint.sh [LABEL]
# Environment:
#   IDLE=60                       seconds to wait once the window is up
#   HERALD=build/bin/herald       the binary to measure
#   HERALD_WEBKIT_CACHE=viewer    WebKit's cache model in the window
#                                 (viewer, the default; browser: WebKit's own
#                                 default, to compare)
#   BY_FILE=WebKitWebProcess      also print the PSS by mapped file of the
#                                 processes whose command line matches
#                                 (an extended regular expression; . for all)
#   SHOT=file.png                 also save a screenshot of the display
#                                 (ImageMagick's import), to see the page
#                                 drew
#   LOG=file                      also keep Herald's (and WebKit's) output
#   WebKit's, JavaScriptCore's, GTK's, Mesa's and glibc malloc's variables
#   (WEBKIT_*, JSC_*, GDK_*, LIBGL_*, GALLIUM_*, MALLOC_*, ...) are passed
#   to Herald (and so to WebKit), e.g. JSC_useJIT=0 to try JavaScriptCore
#   without its JIT; HERALD_WEBKIT_DEFAULTS=1 gives WebKit its defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
label="${1:-window open}"
idle="${IDLE:-60}"
bin="$(realpath "${HERALD:-build/bin/herald}")"
[ -x "$bin" ] || { echo "footprint: $bin not found: run make build first" >&2; exit 1; }
[ -x "$(dirname "$bin")/herald-window" ] || { echo "footprint: herald-window not beside $bin: run make build" >&2; exit 1; }
for t in Xvfb dbus-daemon; do
  command -v "$t" >/dev/null || { echo "footprint: $t is missing (apt-get install xvfb dbus-daemon)" >&2; exit 1; }
done

tmp="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/pss" ./scripts/pss
mkdir -p "$tmp"/{home,run,config,cache,data,xdg}
chmod 700 "$tmp/run"

# A private display and session bus: nothing of the caller's desktop.
setsid Xvfb -displayfd 5 -screen 0 1280x860x24 -nolisten tcp 5>"$tmp/display" 2>"$tmp/xvfb.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/display" ] && break; sleep 0.1; done
display=":$(head -n1 "$tmp/display")"
setsid dbus-daemon --session --nofork --address="unix:path=$tmp/bus" --print-address=6 6>"$tmp/busaddr" 2>"$tmp/bus.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/busaddr" ] && break; sleep 0.1; done

env_vars=(
  "PATH=$PATH" "HOME=$tmp/home" "XDG_RUNTIME_DIR=$tmp/run" "XDG_CONFIG_HOME=$tmp/xdg"
  "XDG_CACHE_HOME=$tmp/cache" "XDG_DATA_HOME=$tmp/data" "HERALD_CONFIG_DIR=$tmp/config"
  "DISPLAY=$display" "DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$tmp/busaddr")" "LANG=C.UTF-8"
  "GSETTINGS_BACKEND=memory" "NO_AT_BRIDGE=1"
)
# Pass the caller's HERALD_* and WebKit / JavaScriptCore / GTK / Mesa /
# allocator knobs through.
while IFS='=' read -r k v; do
  case "$k" in
    HERALD_WEBKIT_*|JSC_*|WEBKIT_*|GDK_*|GSK_*|LIBGL_*|__EGL_*|EGL_*|GALLIUM_*|MESA_*|MALLOC_*|GLIBC_TUNABLES)
      env_vars+=("$k=$v") ;;
  esac
done < <(env)

# Start Herald's two programs as after a boot, not cached: the kernel maps
# the pages around each one a program touches when they are in the page
# cache, so how much of each Go binary counts (11 to 14 MiB) would depend
# on what of it another run or a build left cached.
for f in "$bin" "$(dirname "$bin")/herald-window"; do
  dd if="$f" iflag=nocache count=0 status=none 2>/dev/null || true
done

setsid env -i "${env_vars[@]}" "$bin" >"$tmp/herald.log" 2>&1 &
herald=$!
pids+=("$herald")

# Herald's processes: herald and every descendant (the window process,
# WebKit's web and network processes, and bwrap / xdg-dbus-proxy when
# WebKit's sandbox is on), found by parent pid rather than process group.
descendants() {
  ps -e -o pid=,ppid= | awk -v root="$1" '
    { parent[$1] = $2 }
    END {
      in_[root] = 1; n = 1
      while (n) { n = 0; for (p in parent) if (!(p in in_) && (parent[p] in in_)) { in_[p] = 1; n = 1 } }
      for (p in in_) print p
    }' | sort -n | tr '\n' ' '
}
# The window process and its WebKit helpers are up once the web process is.
for _ in $(seq 300); do
  for p in $(descendants "$herald"); do grep -q WebKitWebProcess "/proc/$p/cmdline" 2>/dev/null && break 2; done
  sleep 0.1
done
web=""
for p in $(descendants "$herald"); do grep -q WebKitWebProcess "/proc/$p/cmdline" 2>/dev/null && web=$p; done
[ -n "$web" ] || { echo "footprint: the window never came up; herald's log:" >&2; tail -20 "$tmp/herald.log" >&2; exit 1; }
sleep "$idle"
if [ -n "${SHOT:-}" ]; then
  import -display "$display" -window root "$SHOT" 2>/dev/null || echo "footprint: no screenshot (is ImageMagick's import installed?)" >&2
fi
[ -z "${LOG:-}" ] || cp "$tmp/herald.log" "$LOG"

group="$(descendants "$herald")"

# PSS splits a shared page among every process that maps it, so other
# WebKit processes on this machine (a test, another Herald, a browser) and
# other X servers (Xvfb maps Mesa's libLLVM) lower the kernel's figure, by
# a different amount at each run. scripts/pss counts each of Herald's pages
# as shared only among Herald's processes, its Xvfb and its session bus:
# the figure on a machine where nothing else runs (needs root to read page
# frame numbers; without root it prints the kernel's PSS and we warn).
by_file=""
if [ -n "${BY_FILE:-}" ]; then
  by_file="$(for p in $group; do if grep -q -E -- "$BY_FILE" "/proc/$p/cmdline" 2>/dev/null; then echo "$p"; fi; done | paste -sd,)"
fi
out="$("$tmp/pss" -group "$(echo $group | tr ' ' ',')" -with "${pids[0]},${pids[1]}" ${by_file:+-by-file "$by_file"})"
mode="$(echo "$out" | awk '$1=="total" {print $4}')"
if [ "$mode" != alone ]; then
  echo "footprint: warning: not root, so this is the kernel's PSS: other WebKit processes and X servers on this machine share libraries and lower it" >&2
fi

mib() { printf '%.1f' "$(echo "$1/1024" | bc -l)"; }
parts=()
total_anon=0
while read -r pid name k r a; do
  case "$pid" in
    total) total_pss=$name; total_rss=$k; total_anon=${a:-0} ;;
    map) printf 'footprint:   %8s MiB  %s\n' "$(mib "$name")" "$k $r $a" ;;
    *)
      printf 'footprint: %-22s pid %-7s PSS %6s MiB  RSS %6s MiB  (heaps and stacks %s MiB)\n' "$name" "$pid" "$(mib "$k")" "$(mib "$r")" "$(mib "${a:-0}")"
      parts+=("$name $(printf '%.0f' "$(echo "$k/1024" | bc -l)")")
      ;;
  esac
done <<<"$out"
printf 'footprint: total PSS %s MiB, RSS %s MiB after %ss idle (%s; %s PSS, of it heaps and stacks %s MiB; load %s)\n' "$(mib "$total_pss")" "$(mib "$total_rss")" "$idle" "$label" "$mode" "$(mib "$total_anon")" "$(cut -d' ' -f1-3 /proc/loadavg)"
joined="$(IFS=,; echo "${parts[*]}" | sed 's/,/, /g')"
printf '| %s | %s | **%s MiB** | %s MiB |\n' "$label" "$joined" "$(mib "$total_pss")" "$(mib "$total_rss")"
