#!/usr/bin/env bash
# Herald's memory with the window open: starts the built Herald
# (build/bin/herald, which starts build/bin/herald-window) on a private Xvfb
# display and session bus with empty settings (the first-run page), waits
# until it has been idle IDLE seconds, and sums the PSS of Herald's process
# group (herald, the window process, WebKit's web and network processes)
# from /proc/PID/smaps_rollup. Prints one line per process and a markdown
# row for BENCHMARKS.md.
#
# Usage: scripts/footprint.sh [LABEL]
# Environment:
#   IDLE=60                       seconds to wait once the window is up
#   HERALD=build/bin/herald       the binary to measure
#   HERALD_WEBKIT_CACHE=viewer    WebKit's cache model in the window
#                                 (viewer, the default; browser: WebKit's own
#                                 default, to compare)
#   any other variable is passed to Herald (and so to WebKit), e.g.
#   JSC_useJIT=0 to try JavaScriptCore without its JIT.
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
# Pass the caller's HERALD_* and JSC_* / WEBKIT_* knobs through.
while IFS='=' read -r k v; do
  case "$k" in HERALD_WEBKIT_*|JSC_*|WEBKIT_*|GDK_*|LIBGL_*) env_vars+=("$k=$v") ;; esac
done < <(env)

setsid env -i "${env_vars[@]}" "$bin" >"$tmp/herald.log" 2>&1 &
herald=$!
pids+=("$herald")

# The window process and its WebKit helpers are up once the web process is.
for _ in $(seq 300); do
  pgrep -g "$herald" -f WebKitWebProcess >/dev/null 2>&1 && break
  sleep 0.1
done
pgrep -g "$herald" -f WebKitWebProcess >/dev/null || { echo "footprint: the window never came up; herald's log:" >&2; tail -20 "$tmp/herald.log" >&2; exit 1; }
sleep "$idle"

# PSS splits shared pages among every process that maps them: another
# WebKit on this machine (another Herald, a test) lowers the figure.
others=$(( $(pgrep -c -f 'WebKitWebProcess|herald-window|WebKitNetworkProcess' || true) - $(pgrep -g "$herald" -c -f 'WebKitWebProcess|herald-window|WebKitNetworkProcess' || true) ))
if [ "$others" -gt 0 ]; then
  echo "footprint: warning: $others other WebKit or Herald window processes run on this machine: they share libraries, so this PSS is lower than alone" >&2
fi

pss() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
rss() { awk '/^Rss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
total_pss=0
total_rss=0
parts=()
for p in $(pgrep -g "$herald" | sort -n); do
  name="$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | awk '{print $1}' | xargs -r basename)"
  grep -q -- "--window" "/proc/$p/cmdline" 2>/dev/null && name=herald-window
  k="$(pss "$p")"
  r="$(rss "$p")"
  total_pss=$((total_pss + k))
  total_rss=$((total_rss + r))
  printf 'footprint: %-22s pid %-7s PSS %6.1f MiB  RSS %6.1f MiB\n' "$name" "$p" "$(echo "$k/1024" | bc -l)" "$(echo "$r/1024" | bc -l)"
  parts+=("$name $(printf '%.0f' "$(echo "$k/1024" | bc -l)")")
done
printf 'footprint: total PSS %.1f MiB, RSS %.1f MiB after %ss idle (%s)\n' "$(echo "$total_pss/1024" | bc -l)" "$(echo "$total_rss/1024" | bc -l)" "$idle" "$label"
joined="$(IFS=,; echo "${parts[*]}" | sed 's/,/, /g')"
printf '| %s | %s | **%.1f MiB** | %.1f MiB |\n' "$label" "$joined" "$(echo "$total_pss/1024" | bc -l)" "$(echo "$total_rss/1024" | bc -l)"
