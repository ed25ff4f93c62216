#!/usr/bin/env bash
# bench/grid_memory on a small graph (the CTest smoke): it exits 0, prints its checks, and the
# losses of 1D K = 4, 1x4 (in 1 and 2 column blocks) and 2x2 agree.
# Usage: check_bench_grid_memory.sh BENCH (STRATA, OUT set)
source "$(dirname "$0")/checks.sh"
must rm -rf "$OUT"
if "$1" 3000 10 2 >"$tmp/log" 2>&1; then ok "bench/grid_memory exited 0"; else
  fail "bench/grid_memory exited non-zero"
fi
for text in "check: 1x4 peak / 1D K = 4 peak" "check: 1x4 bytes / 1D K = 4 bytes" \
  "check: 1x4b2 peak / 1D K = 4 peak" \
  "check: losses of every layout within 1e-5 of 1D's at every epoch: yes"; do
  grep -qF -- "$text" "$tmp/log" && ok "$text" || fail "no '$text'"
done
rows=$(cat "$OUT/grid_memory.jsonl" 2>/dev/null | wc -l)
[ "$rows" = 4 ] && ok "4 rows (1d, 1x4, 1x4b2, 2x2)" || fail "$rows rows in grid_memory.jsonl"
finish || { cat "$tmp/log"; exit 1; }
