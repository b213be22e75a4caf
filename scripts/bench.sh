#!/usr/bin/env bash
# Runs the backend and service benchmarks and prints one markdown table: benchmark,
# ns/op, speed-up over the naive baseline (where one exists), custom
# metrics (frames/s, latency percentiles, bytes per gateway/session, MB/s),
# B/op and allocs/op; then the desktop binary size if it has been built.
#   BENCHTIME=2s ./scripts/bench.sh      (default: go test's 1s)
#   BENCH=Reconnect ./scripts/bench.sh   (a -bench pattern; default .)
#   COUNT=5 ./scripts/bench.sh           (runs each 5 times; the table shows
#                                         the median of every column)
# After the table it checks the flood budgets of ApprovalUnderSRQFlood
# (12,000 server requests of 20 KB): peak RSS under 150 MiB and the next
# real approval under 100 ms p99. It reports them; it never fails on them.
set -euo pipefail
cd "$(dirname "$0")/.."
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
args=(-run '^$' -bench "${BENCH:-.}" -benchmem -count "${COUNT:-1}")
[ -n "${BENCHTIME:-}" ] && args+=(-benchtime "$BENCHTIME")
if ! go test "${args[@]}" ./backend/... ./approval/ ./service/ ./app/ >"$raw" 2>&1; then
	cat "$raw" >&2
	echo "bench: go test failed" >&2
	exit 1
fi
cpu=$(grep -m1 '^cpu:' "$raw" | sed 's/^cpu: //' || true)
echo "Go $(go env GOVERSION), $(go env GOOS)/$(go env GOARCH), ${cpu:-unknown CPU}, $(nproc) cores"
echo
awk -v count="${COUNT:-1}" '
function median(k, c,   i, j, t, a) {
	for (i = 1; i <= c; i++) a[i] = V[k, i] + 0
	for (i = 2; i <= c; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
}
function fmt(x) { return (x == int(x)) ? sprintf("%.0f", x) : (x >= 100 ? sprintf("%.0f", x) : sprintf("%.2f", x)) }
/^pkg: / { pkg = $2; sub(/.*\/herald\//, "", pkg); sub(/^backend\//, "", pkg); next }
/^Benchmark/ {
	name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
	id = pkg SUBSEP name
	if (!(id in seen)) { seen[id] = 1; n++; P[n] = pkg; N[n] = name; ID[n] = id }
	for (i = 3; i < NF; i += 2) {
		u = $(i + 1); k = id SUBSEP u
		if (!(k in C)) { NU[id]++; U[id, NU[id]] = u }
		C[k]++; V[k, C[k]] = $i
	}
}
END {
	print "| package | benchmark | ns/op | vs baseline | metrics | B/op | allocs/op |"
	print "|---|---|---:|---:|---|---:|---:|"
	for (r = 1; r <= n; r++) {
		id = ID[r]; ns = ""; bop = ""; al = ""; extra = ""
		for (j = 1; j <= NU[id]; j++) {
			u = U[id, j]; m = median(id SUBSEP u, C[id SUBSEP u])
			if (u == "ns/op") { ns = m; NSV[id] = m }
			else if (u == "B/op") bop = fmt(m)
			else if (u == "allocs/op") al = fmt(m)
			else { extra = extra (extra == "" ? "" : ", ") fmt(m) " " u; M[id, u] = m }
		}
		R[r] = extra; B[r] = bop; A[r] = al; NS[r] = ns
	}
	for (r = 1; r <= n; r++) {
		ratio = ""; base = P[r] SUBSEP "Baseline" N[r]
		if (N[r] !~ /^Baseline/ && (base in NSV) && NS[r] > 0)
			ratio = sprintf("%.2f×", NSV[base] / NS[r])
		printf "| %s | %s | %s | %s | %s | %s | %s |\n", P[r], N[r], fmt(NS[r]), ratio, R[r], B[r], A[r]
	}
	if (count > 1) printf "\nMedians of %d runs each.\n", count
	f = "service" SUBSEP "ApprovalUnderSRQFlood"
	if (f in NSV) {
		ok = (M[f, "peak-RSS-MiB"] < 150 && M[f, "p99-ms"] < 100) ? "within budget" : "OVER BUDGET"
		printf "\nFlood of 12,000 server requests of 20 KB: peak RSS %s MiB, peak heap %s MiB (budget 150 MiB); the next real approval %s ms p50, %s ms p99 (budget 100 ms): %s.\n", fmt(M[f, "peak-RSS-MiB"]), fmt(M[f, "peak-heap-MiB"]), fmt(M[f, "p50-ms"]), fmt(M[f, "p99-ms"]), ok
	}
}' "$raw"
if [ -f build/bin/herald ]; then
	echo
	echo "Desktop binary build/bin/herald: $(stat -c %s build/bin/herald | awk '{ printf "%.1f MiB (%d bytes)", $1 / 1048576, $1 }')"
fi
