#!/bin/sh
# bench/compare.sh: ibscript against infiniband-diags on the same ibsim
# fabric (issue #8). Builds ibscript, then internal/ibsimbench starts ibsim
# and OpenSM with the project's harness (internal/ibsimtest) on generated fat
# trees of 2,000 and 7,968 nodes, times every tool several times
# (interleaved), prints medians and the ratio behind every target, and stops
# everything it started (the exporter's sweeps against one ibqueryerrors run
# among them); then runs the Go benchmarks behind the embedded simulator's,
# the Go API's, Lua's and the exporter's targets and prints those too.
#
#   bench/compare.sh [-runs N] [-sizes 2000,7968]
#
# Needs ibsim-utils, infiniband-diags and opensm (apt-get install ...).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
CGO_ENABLED=0 go build -o "$tmp/ibscript" ./cmd/ibscript  # static, as README builds it
go build -o "$tmp/ibsimbench" ./internal/ibsimbench

runs=5
prev=
for a in "$@"; do
	[ "$prev" = -runs ] && runs=$a
	prev=$a
done

status=0
"$tmp/ibsimbench" -ibscript "$tmp/ibscript" "$@" || status=$?

# The targets of the embedded simulator and the Go API, from the Go
# benchmarks (median of -runs runs each).
echo
echo "== embedded simulator, Go API and Lua, $runs runs each (go test -bench) =="
go test -run '^$' -bench 'SMPRoundTrip$|Discover16k$|SimMemory16k$|SAGetTable16k$|LuaSMPRoundTrip$' \
	-benchtime 2s -count "$runs" ./engine/ ./bindings/ >"$tmp/gobench.txt" || status=$?
# The exporter's (issue 20): a few iterations each, the 16k sweep takes
# hundreds of milliseconds.
go test -run '^$' -bench 'Sweep16k|ScrapeText|MemoryPerPort' \
	-benchtime 3x -count "$runs" ./exporter/ >>"$tmp/gobench.txt" || status=$?

# median BENCH UNIT: the median of the values a benchmark reported in UNIT.
median() {
	awk -v b="$1" -v u="$2" '$1 ~ "^"b"(-[0-9]+)?$" { for (i = 2; i <= NF; i++) if ($i == u) print $(i-1) }' "$tmp/gobench.txt" |
		sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# target LABEL BENCH UNIT OP LIMIT: prints the median and whether it holds
# (OP is "<" or ">=").
target() {
	m=$(median "$2" "$3")
	if [ -z "$m" ]; then
		printf '  %-52s no result (see go test output)\n' "$1"
		status=1
		return
	fi
	awk -v l="$1" -v m="$m" -v u="$3" -v op="$4" -v lim="$5" 'BEGIN {
		ok = (op == "<") ? (m < lim) : (m >= lim)
		v = (m >= 1000) ? sprintf("%d", m) : sprintf("%.1f", m)
		printf "  %-52s %10s %-10s (want %s %d) %.2fx %s\n", l, v, u, op, lim,
			(op == "<") ? lim / m : m / lim, ok ? "HOLDS" : "misses"
	}'
}

echo "targets (medians):"
target "discovery of 16,050 nodes (BenchmarkDiscover16k)" BenchmarkDiscover16k ms/sweep "<" 100
target "SMP round trips, Go API (BenchmarkSMPRoundTrip)" BenchmarkSMPRoundTrip ops/s ">=" 1000000
target "SMP round trips, Lua loop (BenchmarkLuaSMPRoundTrip)" BenchmarkLuaSMPRoundTrip SMPs/s ">=" 250000
target "simulator memory (BenchmarkSimMemory16k)" BenchmarkSimMemory16k bytes/node "<" 2048
target "SA GetTable over RMPP (BenchmarkSAGetTable16k)" BenchmarkSAGetTable16k segments/s ">=" 200000
target "exporter: 16k fat tree's switch ports swept (wall)" BenchmarkSweep16k/counters ms/sweep "<" 250
target "exporter: the same sweep's CPU time" BenchmarkSweep16k/counters cpu-ms/sweep "<" 250
target "exporter: the same with --details (wall)" BenchmarkSweep16k/details ms/sweep "<" 250
target "exporter: scrape of fattree-2000 (BenchmarkScrapeText)" BenchmarkScrapeText/serve ms/scrape "<" 50
target "exporter: rendering fattree-2000's sweep, per sweep" BenchmarkScrapeText/render ms/render "<" 1000
target "exporter: memory per switch port (16k fat tree)" BenchmarkMemoryPerPort bytes/port "<" 2048
exit $status
