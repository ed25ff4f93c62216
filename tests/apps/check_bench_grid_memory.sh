#!/usr/bin/env bash
# bench/grid_memory on a small graph (the CTest smoke): it exits 0, prints its checks, and the
# losses of 1D K = 4, 1x4 (in 1 and 2 column blocks) and 2x2 agree.
# Usage: check_bench_grid_memory.sh BENCH (STRATA, OUT set)
set -uo pipefail
rm -rf "$OUT" || { echo "FAIL: rm -rf $OUT exited $?"; exit 1; }
log=$(mktemp) || { echo "FAIL: mktemp"; exit 1; }
trap 'rm -f "$log"' EXIT
if ! "$1" 3000 10 2 >"$log" 2>&1; then
  echo "FAIL: bench/grid_memory exited non-zero"; tail -30 "$log"; exit 1
fi
status=0
for text in "check: 1x4 peak / 1D K = 4 peak" "check: 1x4 bytes / 1D K = 4 bytes" \
  "check: 1x4b2 peak / 1D K = 4 peak" \
  "check: losses of every layout within 1e-5 of 1D's at every epoch: yes"; do
  grep -qF -- "$text" "$log" && echo "ok: $text" || { echo "FAIL: no '$text'"; status=1; }
done
rows=$(wc -l <"$OUT/grid_memory.jsonl")
[ "$rows" = 4 ] && echo "ok: 4 rows (1d, 1x4, 1x4b2, 2x2)" || { echo "FAIL: $rows rows"; status=1; }
[ "$status" = 0 ] || cat "$log"
exit $status
