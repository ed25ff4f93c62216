#!/usr/bin/env bash
# bench/scale on a small graph (the CTest smoke): every step exits 0, and the summary prints the
# checks the release run is judged by. Usage: check_bench_scale.sh BENCH_SCALE (STRATA, OUT set)
set -uo pipefail
rm -rf "$OUT" || { echo "FAIL: rm -rf $OUT exited $?"; exit 1; }
log=$(mktemp) || { echo "FAIL: mktemp"; exit 1; }
trap 'rm -f "$log"' EXIT
if ! "$1" 3000 10 1 >"$log" 2>&1; then
  echo "FAIL: bench/scale exited non-zero"; tail -30 "$log"; exit 1
fi
status=0
for text in "distributed partition peak / serial METIS peak" \
  "--data G.h5 (metis on rank 0) peak / directory peak" "--data G.h5 (ptscotch) peak / directory peak" \
  "every pipeline rank (partition --distributed, train from its directory"; do
  grep -qF -- "$text" "$log" && echo "ok: $text" || { echo "FAIL: no '$text'"; status=1; }
done
if python3 - "$OUT/scale-timings.jsonl" <<'PY'; then echo "ok: 16 rows (generate, 7 steps of 1-4 processes), all exited 0"; else status=1; fi
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = [r for r in rows if r["rc"] != 0 or not r["peak_rss_bytes"]]
print(f"{len(rows)} rows, {len(bad)} failed: {bad[:3]}")
sys.exit(0 if len(rows) == 16 and not bad else 1)
PY
[ "$status" = 0 ] || tail -30 "$log"
exit $status
