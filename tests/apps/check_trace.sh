#!/usr/bin/env bash
# `strata train --trace` on 2 ranks (docs/training.md, "A timeline of the run"): one Chrome trace
# of the traced epochs with both ranks' training steps, ops and halo waits; scripts/trace_summary
# reads it (per-rank categories, the longest waits inside the aggregation they blocked); an
# existing trace is refused in one line before any data is read, --overwrite replaces it, and a
# pipeline run is traced too.
# Usage: check_trace.sh MPIEXEC STRATA DATA_DIR SCRIPTS_DIR
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
summary=$(realpath "$4")/trace_summary
source "$(dirname "$0")/checks.sh"
cd "$tmp" || exit 1
run() { timeout 120 "$mpiexec" -np 2 --oversubscribe "$strata" train --threads 1 --quiet "$@"; }

must run --data "$data/cora.h5" --epochs 4 --trace t.json --trace-epochs 2:3 >/dev/null
/usr/bin/python3 - t.json <<'PY' && ok "the trace holds both ranks' epochs 2 and 3" || fail "trace contents"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["otherData"]["epochs"] == "2..3", d["otherData"]
x = [e for e in d["traceEvents"] if e["ph"] == "X"]
for rank in (0, 1):
    steps = [e["args"]["value"] for e in x if e["pid"] == rank and e["name"] == "training step"]
    assert steps == [2, 3], (rank, steps)
    cats = {e["cat"] for e in x if e["pid"] == rank}
    assert {"gemm", "aggregation", "wait", "step"} <= cats, (rank, cats)
    assert any(e["name"] == "a halo exchange (receive)" for e in x if e["pid"] == rank)
PY
"$summary" t.json --top 3 >summary.out 2>&1 &&
  grep -q "t.json: epochs 2..3, 2 ranks" summary.out && grep -q "^rank 1: longest waits" summary.out &&
  grep -Eq "^ +[0-9.]+ ms +.+ in .+ \[(training step|evaluation|epoch figures|optimizer step) [23]\]" summary.out &&
  ok "trace_summary: categories per rank, the longest waits and where they blocked" ||
  fail "trace_summary: $(cat summary.out)"

run --data "$data/cora.h5" --epochs 2 --trace t.json >again.out 2>&1
rc=$?
is_error $rc && grep -q "trace = 't.json': the file exists; set overwrite to replace it (--trace)" again.out &&
  ok "an existing trace is refused" || fail "exit $rc: $(cat again.out)"
must run --data "$data/cora.h5" --epochs 2 --trace t.json --overwrite >/dev/null
grep -q '"epochs":"2..2"' t.json && ok "--overwrite replaces it (the second epoch by default)" ||
  fail "not replaced: $(head -c 200 t.json)"
must run --data "$data/cora.h5" --model gcnii --layers 4 --parallel pipeline --chunks 4 --epochs 2 \
  --trace p.json >/dev/null
grep -q '"name":"a halo exchange (receive)"' p.json && grep -q '"pid":1' p.json &&
  ok "a pipeline run's trace holds its stage transfers' waits" || fail "pipeline trace"
finish
