#!/usr/bin/env bash
# `strata train --parallel pipeline` end to end on Cora under mpirun:
# - 2 stages with one chunk equal graph parallelism on one rank, every epoch (losses within
#   1e-5 relative, accuracies within one vertex);
# - 2 stages x 8 chunks: the metrics carry the pipeline fields, stage bytes are the same every
#   epoch and a multiple of 2 |V| 4 (the cut widths; tests/layers checks the exact formula);
# - the accuracy guard's staleness measurement (2 stages x 8 chunks, a bound it never passes): the
#   gap is recorded and finite at every evaluation, the stale loss measured after epoch e is
#   epoch e+1's own loss, and the run is bit-identical to --guard off (the measurement leaves
#   the history as it found it);
# - feature slices inside the stages, 2 stages x 2 slices x 8 chunks on 4 ranks, train as 2 stages
#   x 8 chunks on 2 (losses within 1e-5 relative, accuracies within one vertex, every epoch)
#   with the same stage bytes summed over the ranks (each rank sends its half);
# - the hybrid 2 stages x 2 ways runs on 4 ranks and exchanges mirror rows (way_bytes > 0), and
#   its guard measures a finite staleness gap;
# - feature slices inside the hybrid's ways, 2 stages x 2 ways x 2 slices x 8 chunks on 8 ranks,
#   train as 2 x 2 x 1 on 4 (every epoch) with the same stage and mirror bytes summed over the
#   ranks;
# - from a partition directory with a chunk map (strata partition --chunks), one chunk per way
#   (1 stage x 2 ways) equals graph parallelism on the same directory and on one rank;
# - one rank's error ends every rank (a bad model for the pipeline fails on all, no hang).
# Usage: check_pipeline.sh MPIEXEC STRATA DATA_DIR
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
source "$(dirname "$0")/checks.sh"
run() {  # run RANKS METRICS [args...]
  local ranks=$1 metrics=$2
  shift 2
  timeout 240 "$mpiexec" -n "$ranks" --oversubscribe "$strata" train --data "${DATA:-$data/cora.h5}" \
    --model gcnii --layers 8 --epochs 10 --threads 1 --seed 3 --metrics "$metrics" --quiet "$@"
}

run 1 "$tmp/graph.jsonl" >/dev/null && ok "graph parallelism, 1 rank" || fail "graph, 1 rank"
run 2 "$tmp/pipe1.jsonl" --parallel pipeline --chunks 1 >"$tmp/pipe1.out" &&
  ok "pipeline, 2 stages, 1 chunk" || fail "pipeline, 1 chunk"
same_run() {  # same_run A.jsonl B.jsonl: exact at every epoch
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(b) == 10, (len(a), len(b))
for x, y in zip(a, b):
    rel = abs(x["loss"] - y["loss"]) / abs(x["loss"])
    assert rel < 1e-5, (x["epoch"], x["loss"], y["loss"])
    for k, n in (("train_acc", 140), ("val_acc", 500), ("test_acc", 1000)):
        assert abs(x[k] - y[k]) * n <= 1 + 1e-9, (x["epoch"], k, x[k], y[k])
PY
}
if same_run "$tmp/graph.jsonl" "$tmp/pipe1.jsonl"; then
  ok "one chunk: the pipeline equals graph parallelism at every epoch"
else
  fail "one chunk: the pipeline differs from graph parallelism"
fi

must "$strata" partition --data "$data/cora.h5" --parts 2 --chunks 2 --out "$tmp/cora.2c" >/dev/null
DATA=$tmp/cora.2c run 2 "$tmp/dir-graph.jsonl" >/dev/null &&
  ok "graph parallelism from a chunked partition directory" || fail "graph from the directory"
DATA=$tmp/cora.2c run 2 "$tmp/dir-pipe.jsonl" --parallel pipeline --stages 1 --ways 2 \
  >"$tmp/dir-pipe.out" && ok "pipeline from a chunked partition directory" ||
  fail "pipeline from the directory"
if same_run "$tmp/dir-graph.jsonl" "$tmp/dir-pipe.jsonl" &&
  same_run "$tmp/graph.jsonl" "$tmp/dir-pipe.jsonl"; then
  ok "the directory's chunk map, one chunk per way: equals graph parallelism"
else
  fail "the pipeline from the directory differs from graph parallelism"
fi

run 2 "$tmp/pipe8.jsonl" --parallel pipeline --chunks 8 --guard off >/dev/null &&
  ok "pipeline, 2 stages, 8 chunks" || fail "pipeline, 8 chunks"
if /usr/bin/python3 - "$tmp/pipe8.jsonl" <<'PY'; then
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert len(r) == 10 and all(x["schema_version"] == 10 for x in r)
for k in ("stage_bytes", "way_bytes", "bubble_s", "stage_wait_s", "chunks", "snapshot_period"):
    assert all(k in x for x in r), k
sizes = {x["stage_bytes"] for x in r}
assert len(sizes) == 1, sizes
b = sizes.pop()
assert b > 0 and b % (2 * 2708 * 4) == 0, b
assert all(x["chunks"] == 8 and x["way_bytes"] == 0 and x["halo_bytes"] == 0 for x in r)
PY
  ok "pipeline metrics: stage bytes constant and whole rows"
else
  fail "pipeline metrics"
fi

run 4 "$tmp/slices.jsonl" --parallel pipeline --stages 2 --feature-slices 2 --chunks 8 \
  --guard off >"$tmp/slices.out" && ok "pipeline, 2 stages x 2 feature slices, 8 chunks" ||
  fail "pipeline, 2 stages x 2 feature slices"
if same_run "$tmp/pipe8.jsonl" "$tmp/slices.jsonl" && /usr/bin/python3 -c "
import json
a = [json.loads(l) for l in open('$tmp/pipe8.jsonl')]
b = [json.loads(l) for l in open('$tmp/slices.jsonl')]
assert all(x['stage_bytes'] == y['stage_bytes'] > 0 for x, y in zip(a, b))
assert all(y['a2a_bytes'] > 0 for y in b)
"; then
  ok "2 x 2 (feature slices) trains as 2 x 1 at 8 chunks, stage bytes split over the slices"
else
  fail "2 x 2 (feature slices) differs from 2 x 1"
fi

run 2 "$tmp/pipe8g.jsonl" --parallel pipeline --chunks 8 --guard on --guard-bound 1e9 \
  >/dev/null && ok "pipeline, 8 chunks, guard on" || fail "pipeline, 8 chunks, guard on"
if /usr/bin/python3 - "$tmp/pipe8.jsonl" "$tmp/pipe8g.jsonl" <<'PY'; then
import json, math, sys
off = [json.loads(l) for l in open(sys.argv[1])]
on = [json.loads(l) for l in open(sys.argv[2])]
assert len(on) == len(off) == 10
for a, b in zip(off, on):
    for k in ("loss", "train_acc", "val_acc", "test_acc", "val_loss", "eval_train_loss"):
        assert a[k] == b[k], (a["epoch"], k, a[k], b[k])
    assert "staleness_gap" not in a and "guard" not in b
    g, s, f = b["staleness_gap"], b["stale_train_loss"], b["fresh_train_loss"]
    assert math.isfinite(g) and g >= 0 and math.isfinite(s) and math.isfinite(f), b
    assert math.isfinite(b["raw_staleness_gap"]) and b["raw_staleness_gap"] >= 0, b
    assert g != b["raw_staleness_gap"], b  # Adam scales the coordinates unevenly
for b, c in zip(on, on[1:]):  # measured after epoch e: epoch e+1's own step
    assert b["stale_train_loss"] == c["loss"], (b["epoch"], b["stale_train_loss"], c["loss"])
print("gaps", " ".join("%.4f" % x["staleness_gap"] for x in on),
      "raw", " ".join("%.4f" % x["raw_staleness_gap"] for x in on))
PY
  ok "guard on: the staleness gap recorded and finite; the run bit-identical to guard off"
else
  fail "guard on: staleness gap or identity"
fi

run 4 "$tmp/hybrid.jsonl" --parallel pipeline --stages 2 --ways 2 --chunks 4 >/dev/null &&
  ok "hybrid 2 stages x 2 ways" || fail "hybrid 2 x 2"
if /usr/bin/python3 -c "
import json, math, sys
r = [json.loads(l) for l in open('$tmp/hybrid.jsonl')]
assert len(r) == 10 and all(x['way_bytes'] > 0 and x['stage_bytes'] > 0 for x in r)
stale = [x for x in r if x['chunks'] > 2]  # not yet exact (one chunk per way)
assert stale and all(math.isfinite(x['staleness_gap']) for x in stale)
"; then
  ok "hybrid exchanges mirror rows between ways; its staleness gap is finite"
else
  fail "hybrid metrics"
fi

run 4 "$tmp/hybrid8.jsonl" --parallel pipeline --stages 2 --ways 2 --chunks 8 --guard off \
  >/dev/null && ok "hybrid 2 stages x 2 ways, 8 chunks" || fail "hybrid 2 x 2, 8 chunks"
run 8 "$tmp/swf.jsonl" --parallel pipeline --stages 2 --ways 2 --feature-slices 2 --chunks 8 \
  --guard off >"$tmp/swf.out" && ok "pipeline, 2 stages x 2 ways x 2 feature slices, 8 chunks" ||
  fail "pipeline, 2 x 2 x 2"
if same_run "$tmp/hybrid8.jsonl" "$tmp/swf.jsonl" && /usr/bin/python3 -c "
import json
a = [json.loads(l) for l in open('$tmp/hybrid8.jsonl')]
b = [json.loads(l) for l in open('$tmp/swf.jsonl')]
assert all(x['stage_bytes'] == y['stage_bytes'] > 0 for x, y in zip(a, b))
assert all(x['way_bytes'] == y['way_bytes'] > 0 for x, y in zip(a, b))
assert all(y['a2a_bytes'] > 0 for y in b)
"; then
  ok "2 x 2 x 2 (S x W x F) trains as 2 x 2 x 1, stage and mirror bytes split over the slices"
else
  fail "2 x 2 x 2 (S x W x F) differs from 2 x 2 x 1"
fi

timeout 120 "$mpiexec" -n 2 --oversubscribe "$strata" train --data "$data/cora.h5" \
  --parallel pipeline --model gat --epochs 1 >"$tmp/gat.out" 2>"$tmp/gat.err"
rc=$?
if is_error "$rc" && grep -q "neither row-local nor an aggregation" "$tmp/gat.err"; then
  ok "an op the pipeline cannot run ends the job with its message"
else
  fail "gat in the pipeline: exit $rc"
  cat "$tmp/gat.err"
fi
finish
