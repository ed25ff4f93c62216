#!/usr/bin/env bash
# `strata plan` pipeline candidates against a real `strata train --plan FILE` run on Cora
# (GCNII 8 x 64, 2 ranks): the plan's pipeline candidate (2 stages x 1 way x 8 chunks), made the
# recommendation, is what train runs; the metrics' stage_bytes equal the plan's every epoch;
# the memory plan train prints per rank is within 2 % of the plan's (the chunk scratch is sized
# for |V| / C x 1.03 rows, train's for its largest METIS chunk). And `train --plan auto` with
# graph parallelism from the .h5 partitions with METIS, as the planner measured. The plan's 1 x 2
# grid candidate (feature_slices = 2), made the recommendation, runs as planned: the metrics'
# halo and all-to-all bytes equal the plan's every epoch. At 4 ranks, the plan's S x F candidate
# (2 stages x 2 feature slices x 8 chunks), made the recommendation, runs as planned: the
# metrics' stage bytes and all-to-all bytes equal the plan's every epoch, and the largest rank's
# memory plan is within 2 % of the plan's. At 4 ranks too, the hybrid candidate (2 stages x 2 ways
# x 16 chunks), made the recommendation, runs as planned: the metrics' stage bytes and mirror
# bytes (way_bytes) equal the plan's every epoch, and the memory plan is within 2 %. At 8 ranks,
# the S x W x F candidate (2 stages x 2 ways x 2 feature slices x 16 chunks) likewise: stage,
# mirror and all-to-all bytes exact, memory within 2 %.
# Usage: check_plan_pipeline.sh MPIEXEC STRATA DATA_DIR
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
source "$(dirname "$0")/checks.sh"

# recommend PLAN OUT MATCH CHECK: OUT is PLAN with one recommendation, the first candidate c for
# which the Python expression MATCH holds; CHECK must hold for it too.
recommend() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
found = False
for c in plan["candidates"]:
    c["recommended"] = False
    if not found and eval(sys.argv[3], {}, {"c": c}):
        c["recommended"] = found = True
        assert eval(sys.argv[4], {}, {"c": c}), c
assert found
json.dump(plan, open(sys.argv[2], "w"))
PY
}
# planned_run_matches NAME PLAN METRICS OUT RANKS EPOCHS KEY...: every epoch's KEYs in METRICS
# equal the recommended candidate's, and the largest rank's memory plan train printed (OUT) is
# within 2 % of the candidate's planned_bytes.
planned_run_matches() {
  /usr/bin/python3 - "$@" <<'PY'
import json, re, sys
name, plan, metrics, out, ranks, epochs, *keys = sys.argv[1:]
c = next(c for c in json.load(open(plan))["candidates"] if c["recommended"])
rows = [json.loads(l) for l in open(metrics) if l.strip()]
assert len(rows) == int(epochs), len(rows)
for e in rows:
    got, want = tuple(e[k] for k in keys), tuple(c[k] for k in keys)
    assert got == want, (keys, got, want)
printed = [float(x) for x in re.findall(r"rank \d+ \(stage \d+\) ([0-9.]+) MB", open(out).read())]
assert len(printed) == int(ranks), printed
measured, predicted = max(printed), c["planned_bytes"] / 1e6
print(f"{name}: " + ", ".join(f"{k} {c[k]}" for k in keys) + " (plan = metrics); "
      f"memory plan {predicted:.1f} MB planned, {measured:.1f} MB printed")
assert abs(predicted - measured) <= 0.02 * measured, (predicted, measured)
PY
}

# run_planned NAME PLAN BASE RANKS MATCH CHECK APPLIED KEY...: BASE.json is PLAN with the
# candidate MATCH recommended (CHECK holds for it); `train --plan BASE.json` on RANKS ranks for 2
# epochs prints APPLIED, and planned_run_matches holds for the KEYs.
run_planned() {
  local name=$1 plan=$2 base=$3 ranks=$4 match=$5 check=$6 applied=$7
  shift 7
  recommend "$plan" "$base.json" "$match" "$check" && ok "a $name candidate" ||
    { fail "no $name candidate"; return; }
  timeout 240 "$mpiexec" -n "$ranks" --oversubscribe "$strata" train --data "$data/cora.h5" \
    "${model[@]}" --epochs 2 --threads 1 --plan "$base.json" --metrics "$base.jsonl" \
    >"$base.out" 2>&1 && ok "train --plan FILE runs $name" ||
    { cat "$base.out"; fail "train --plan FILE ($name)"; }
  grep -q -- "$applied" "$base.out" && ok "the plan's $name applied" ||
    { grep "^plan" "$base.out"; fail "$name not reported"; }
  planned_run_matches "$name" "$base.json" "$base.jsonl" "$base.out" "$ranks" 2 "$@" &&
    ok "$name: $* exact, memory within 2 %" || fail "$name: bytes or memory differ"
}

model=(--model gcnii --layers 8 --hidden 64)
"$strata" plan --data "$data/cora.h5" "${model[@]}" --ranks 2 --cache-dir "$tmp/cache" --json \
  >"$tmp/plan.json" &&
  /usr/bin/python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["version"] == 4' \
    "$tmp/plan.json" && ok "plan with pipeline candidates (format 4)" || fail "strata plan"
recommend "$tmp/plan.json" "$tmp/pipe.json" \
  'c["parallel"] == "pipeline" and (c["stages"], c["ways"], c["chunks"]) == (2, 1, 8)' \
  'c["stage_bytes"] > 0 and 0 < c["bubble"] < 1' &&
  ok "a pipeline candidate 2 x 1 x 8" || fail "no pipeline candidate"
timeout 240 "$mpiexec" -n 2 --oversubscribe "$strata" train --data "$data/cora.h5" "${model[@]}" \
  --epochs 3 --threads 1 --plan "$tmp/pipe.json" --metrics "$tmp/m.jsonl" >"$tmp/train.out" 2>&1 &&
  ok "train --plan FILE runs the pipeline" || { cat "$tmp/train.out"; fail "train --plan FILE"; }
grep -q -- "): parallel = pipeline, stages = 2, ways = 1, chunks = 8, for 2 ranks" "$tmp/train.out" &&
  ok "the plan's layout applied" || fail "layout not reported"
planned_run_matches pipeline "$tmp/pipe.json" "$tmp/m.jsonl" "$tmp/train.out" 2 3 stage_bytes &&
  ok "stage bytes exact, memory within 2 %" || fail "stage bytes or memory differ"
recommend "$tmp/plan.json" "$tmp/grid.json" \
  'c["feature_slices"] == 2 and c["recompute"] == "none"' \
  'c["parallel"] == "graph" and c["a2a_bytes"] > 0 and c["halo_bytes"] == 0' &&
  ok "a grid candidate 1 x 2" || fail "no grid candidate"
timeout 240 "$mpiexec" -n 2 --oversubscribe "$strata" train --data "$data/cora.h5" "${model[@]}" \
  --epochs 2 --threads 1 --plan "$tmp/grid.json" --metrics "$tmp/g.jsonl" >"$tmp/grid.out" 2>&1 &&
  ok "train --plan FILE runs the grid" || { cat "$tmp/grid.out"; fail "train --plan FILE (grid)"; }
grep -q -- "): parallel = graph, recompute = none, feature_slices = 2, partition_method = metis, for 2 ranks" \
  "$tmp/grid.out" && ok "the plan's grid applied" || { grep "^plan" "$tmp/grid.out"; fail "grid not reported"; }
/usr/bin/python3 - "$tmp/grid.json" "$tmp/g.jsonl" <<'PY' && ok "grid bytes exact" || fail "grid bytes differ"
import json, sys
c = next(c for c in json.load(open(sys.argv[1]))["candidates"] if c["recommended"])
for e in (json.loads(l) for l in open(sys.argv[2])):
    assert (e["halo_bytes"], e["a2a_bytes"]) == (c["halo_bytes"], c["a2a_bytes"]), (e, c)
PY
# A planned graph-parallel run from a .h5 partitions as the planner measured (METIS), although
# train's own default is ptscotch.
timeout 240 "$mpiexec" -n 2 --oversubscribe "$strata" train --data "$data/cora.h5" --plan auto \
  --epochs 1 --threads 1 >"$tmp/planned.out" 2>&1 || { cat "$tmp/planned.out"; fail "train --plan auto"; }
grep -q -- "planned here, machine .*: parallel = graph, recompute = [a-z]*, partition_method = metis, for 2 ranks" \
  "$tmp/planned.out" && ok "a planned run partitions with METIS" ||
  { grep "^plan" "$tmp/planned.out"; fail "planned run: no partition_method = metis"; }
# S x F: the pipeline with feature slices inside its stages, planned at 4 ranks.
"$strata" plan --data "$data/cora.h5" "${model[@]}" --ranks 4 --cache-dir "$tmp/cache" --json \
  >"$tmp/plan4.json" && ok "plan at 4 ranks" || fail "strata plan --ranks 4"
run_planned "S x F" "$tmp/plan4.json" "$tmp/sf" 4 \
  'c["parallel"] == "pipeline" and (c["stages"], c["ways"], c["chunks"], c["feature_slices"]) == (2, 1, 8, 2)' \
  'c["stage_bytes"] > 0 and c["a2a_bytes"] > 0' \
  "): parallel = pipeline, stages = 2, ways = 1, chunks = 8, feature_slices = 2, for 4 ranks" \
  stage_bytes a2a_bytes recompute_a2a_bytes
# The hybrid: 2 stages x 2 ways, priced with the mirror lists of the chunks train makes.
run_planned hybrid "$tmp/plan4.json" "$tmp/ways" 4 \
  'c["parallel"] == "pipeline" and (c["stages"], c["ways"], c["chunks"], c["feature_slices"]) == (2, 2, 16, 1)' \
  'c["stage_bytes"] > 0 and c["way_bytes"] > 0' \
  "): parallel = pipeline, stages = 2, ways = 2, chunks = 16, for 4 ranks" stage_bytes way_bytes
# S x W x F: feature slices inside the hybrid's ways, planned at 8 ranks.
"$strata" plan --data "$data/cora.h5" "${model[@]}" --ranks 8 --cache-dir "$tmp/cache" --json \
  >"$tmp/plan8.json" && ok "plan at 8 ranks" || fail "strata plan --ranks 8"
run_planned "S x W x F" "$tmp/plan8.json" "$tmp/swf" 8 \
  'c["parallel"] == "pipeline" and (c["stages"], c["ways"], c["chunks"], c["feature_slices"]) == (2, 2, 16, 2)' \
  'c["stage_bytes"] > 0 and c["way_bytes"] > 0 and c["a2a_bytes"] > 0' \
  "): parallel = pipeline, stages = 2, ways = 2, chunks = 16, feature_slices = 2, for 8 ranks" \
  stage_bytes way_bytes a2a_bytes recompute_a2a_bytes
finish
