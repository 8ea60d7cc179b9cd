#!/bin/sh
# bench/compare.sh: ibscript against infiniband-diags on the same ibsim
# fabric (issue #8). Builds ibscript, then internal/ibsimbench starts ibsim
# and OpenSM with the project's harness (internal/ibsimtest) on generated fat
# trees of 2,000 and 7,968 nodes, times every tool several times
# (interleaved), prints medians and the ratio behind every target, and stops
# everything it started.
#
#   bench/compare.sh [-runs N] [-sizes 2000,7968]
#
# Needs ibsim-utils, infiniband-diags and opensm (apt-get install ...).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
go build -o "$tmp/ibscript" ./cmd/ibscript
go build -o "$tmp/ibsimbench" ./internal/ibsimbench
"$tmp/ibsimbench" -ibscript "$tmp/ibscript" "$@"
