#!/usr/bin/env bash
# `strata calibrate` end to end (its figures are timings, so only their presence and sanity are
# checked): every figure of machine.json measured and positive, the last-level cache from sysfs
# where the kernel reports one (not CPUID's, which in a VM can be the host's), and the fits
# (SpMM scale, fixed step cost, time scale) within a factor of 5 of the kernel model, and a
# spread (over calibrate's 3 interleaved rounds) for every figure (machine.json version 4).
# Its output: a line per round, a line per figure (median and spread) and before each fitting
# run, and how strata plan finds the file written (--out: --machine FILE or STRATA_MACHINE=FILE).
# Then `MPIEXEC -np 2 strata calibrate` adds the network figures to the same file, which is kept
# at KEEP (the CTest fixture calibrated_machine: bench_plan_smoke plans with it).
# Usage: check_calibrate.sh STRATA MPIEXEC KEEP
strata=$(realpath "$1")
mpiexec=$2
keep=$3
source "$(dirname "$0")/checks.sh"
unset STRATA_MACHINE

"$strata" calibrate --seconds 0.01 --out "$tmp/m.json" >"$tmp/out" 2>&1 &&
  ok "calibrate writes machine.json" || { cat "$tmp/out"; fail "strata calibrate"; }
grep -q "GCN 3x16 on 2k vertices" "$tmp/out" && ok "calibrate prints the fits" ||
  fail "no fit line: $(cat "$tmp/out")"
grep -q "^calibrate: threads 1: round 3 of 3 done$" "$tmp/out" &&
  grep -q "^calibrate: threads 1: streaming .* GB/s (spread [0-9]* %)$" "$tmp/out" &&
  grep -q "^calibrate: threads 1: GEMM width 256: " "$tmp/out" &&
  grep -q "^calibrate: threads 1: SpMM width 8: " "$tmp/out" &&
  grep -q "^calibrate: threads 1: fitting: training a GCN 3x128 on 60k generated vertices$" "$tmp/out" &&
  ok "a line per round, per figure with its spread, and before each fitting run" ||
  fail "no progress lines: $(cat "$tmp/out")"
grep -qF "strata plan uses it with --machine $tmp/m.json or STRATA_MACHINE=$tmp/m.json" "$tmp/out" &&
  ok "calibrate --out says how strata plan finds the file" || fail "no advice: $(tail -2 "$tmp/out")"
/usr/bin/python3 - "$tmp/m.json" <<'PY' && ok "every figure present and sane" || fail "machine.json"
import glob, json, sys
m = json.load(open(sys.argv[1]))
assert m["format"] == "strata-machine" and m["version"] == 4, m
sizes = {}
for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
    kind = open(d + "/type").read().strip()
    if kind != "Instruction":
        text = open(d + "/size").read().strip()
        unit = {"K": 1024, "M": 1 << 20}.get(text[-1], 1)
        sizes[int(open(d + "/level").read())] = int(text.rstrip("KM")) * unit
if sizes:
    assert m["cache_bytes"] == sizes[max(sizes)], (m["cache_bytes"], sizes)
for r in m["by_threads"]:
    for key in ("memory_gbs", "cache_gbs", "dropout_entry_s", "softmax_entry_s"):
        assert r[key] > 0, (key, r)
    for key in ("gemm_gflops", "gemm_tn_gflops", "spmm_in_cache_g", "spmm_out_of_cache_g"):
        assert len(r[key]) == 4 and all(p["rate"] > 0 for p in r[key]), (key, r)
    assert r["step_s"] >= 0, r
    # Fitted ratios of a training run's time to the kernels' prediction: finite and positive,
    # within a decade of 1 (a machine shared with other jobs gave spmm_scale 0.118 here, and one
    # whose sysfs L3 is 480 MiB times "in-cache" SpMM on arrays that are not).
    for key in ("spmm_scale", "time_scale"):
        assert 0.05 < r[key] < 20, (key, r[key])
    # A spread for every figure the model reads, each (max - min) / median >= 0; with one
    # thread the BLAS hand-over is not timed (no second pool): 0, no spread.
    untimed = ("blas_switch_s",) if r["threads"] == 1 else ()
    for key in untimed:
        assert r[key] == 0, (key, r)
    names = [k for k in r
             if k not in ("threads", "spread", *untimed) and not isinstance(r[k], list)]
    names += [f"{k}@{p['x']:g}" for k in r if isinstance(r[k], list) for p in r[k]]
    assert sorted(r["spread"]) == sorted(names), (sorted(r["spread"]), sorted(names))
    assert all(s >= 0 for s in r["spread"].values()), r["spread"]
PY
"$mpiexec" -np 2 "$strata" calibrate --seconds 0.01 --out "$tmp/m.json" >"$tmp/net" 2>&1 &&
  grep -q "network inside a node: measured; across nodes: by hand or defaults" "$tmp/net" &&
  grep -q "^calibrate: network inside a node (ranks 0-1): latency " "$tmp/net" &&
  /usr/bin/python3 -c "import json, sys; m = json.load(open(sys.argv[1])); assert m['mpi_measured'] and not m['inter_node_measured'] and m['version'] == 4" \
    "$tmp/m.json" && ok "mpiexec -np 2 calibrate adds the network to the same file" ||
  { cat "$tmp/net"; fail "network calibration"; }
mkdir -p "$(dirname "$keep")" && cp "$tmp/m.json" "$keep" || fail "cannot keep $keep"
finish
