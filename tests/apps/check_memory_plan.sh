#!/usr/bin/env bash
# The memory plan holds for a real run: `strata train` on a generated graph whose activations
# dominate (20k vertices, 3 x 512) peaks at most 1.2 x its printed plan plus a fixed baseline, in
# every --recompute mode, and `all` plans less than `none`. The baseline is what the same command
# holds beyond its plan on a tiny graph (200 vertices): the program, MPI, OpenBLAS and OpenMP
# buffers and threads, HDF5.
# (bench/memory measures the 200k-vertex graph, a larger one and depth in release builds.)
# Usage: check_memory_plan.sh STRATA
set -u
strata=$(realpath "$1")
# Under AddressSanitizer (the asan preset sets ASAN_OPTIONS) the allocator's redzones and
# quarantine add to every allocation: peak RSS says nothing about the plan there.
if [ -n "${ASAN_OPTIONS:-}" ]; then
  echo "SKIPPED: peak RSS is not the plan's measure under AddressSanitizer"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
"$strata" generate --nodes 20000 --avg-degree 10 --features 32 --classes 8 --seed 3 --out g.h5 \
  >/dev/null || { echo "FAIL: generate"; exit 1; }
"$strata" generate --nodes 200 --avg-degree 10 --features 32 --classes 8 --seed 3 \
  --out tiny.h5 >/dev/null || { echo "FAIL: generate"; exit 1; }
timeout 240 "$strata" train --data tiny.h5 --layers 3 --hidden 512 --epochs 2 --threads 2 --quiet \
  --metrics tiny.jsonl >/dev/null || { echo "FAIL: train on the tiny graph"; exit 1; }
failed=0
for mode in none aggregation all; do
  timeout 240 "$strata" train --data g.h5 --layers 3 --hidden 512 --epochs 2 --threads 2 \
    --recompute "$mode" --quiet --metrics "m-$mode.jsonl" >/dev/null 2>"err-$mode" ||
    { echo "FAIL: train --recompute $mode"; cat "err-$mode"; failed=1; continue; }
  /usr/bin/python3 - "m-$mode.jsonl" "$mode" tiny.jsonl <<'PY' || failed=1
import json, sys
def peak_and_plan(path):
    rows = [json.loads(l) for l in open(path)]
    return max(r["peak_rss_bytes"] for r in rows), rows[0]["planned_bytes"]
peak, plan = peak_and_plan(sys.argv[1])
tiny_peak, tiny_plan = peak_and_plan(sys.argv[3])
base = tiny_peak - tiny_plan
limit = 1.2 * plan + base
verdict = "ok" if peak <= limit else "FAIL"
print(f"{verdict}: --recompute {sys.argv[2]}: peak RSS {peak / 1e6:.1f} MB, plan {plan / 1e6:.1f} MB, "
      f"baseline {base / 1e6:.1f} MB, limit 1.2 x plan + baseline = {limit / 1e6:.1f} MB")
sys.exit(0 if peak <= limit else 1)
PY
done
/usr/bin/python3 - m-none.jsonl m-all.jsonl <<'PY' || failed=1
import json, sys
none, alls = (json.loads(open(p).readline())["planned_bytes"] for p in sys.argv[1:])
print(("ok" if alls < none else "FAIL") + f": plan none {none / 1e6:.1f} MB > all {alls / 1e6:.1f} MB")
sys.exit(0 if alls < none else 1)
PY
[ "$failed" -eq 0 ] && echo "all memory checks passed"
exit "$failed"
