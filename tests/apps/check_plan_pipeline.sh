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
# bytes (way_bytes) equal the plan's every epoch, and the memory plan is within 2 %.
# Usage: check_plan_pipeline.sh MPIEXEC STRATA DATA_DIR
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
source "$(dirname "$0")/checks.sh"

model=(--model gcnii --layers 8 --hidden 64)
"$strata" plan --data "$data/cora.h5" "${model[@]}" --ranks 2 --cache-dir "$tmp/cache" --json \
  >"$tmp/plan.json" && ok "plan with pipeline candidates" || fail "strata plan"
/usr/bin/python3 - "$tmp/plan.json" "$tmp/pipe.json" <<'PY' && ok "a pipeline candidate 2 x 1 x 8" || fail "no pipeline candidate"
import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["version"] == 4, plan["version"]
found = False
for c in plan["candidates"]:
    c["recommended"] = False
    if c["parallel"] == "pipeline" and (c["stages"], c["ways"], c["chunks"]) == (2, 1, 8):
        c["recommended"] = found = True
        assert c["stage_bytes"] > 0 and 0 < c["bubble"] < 1, c
assert found
json.dump(plan, open(sys.argv[2], "w"))
PY
timeout 240 "$mpiexec" -n 2 --oversubscribe "$strata" train --data "$data/cora.h5" "${model[@]}" \
  --epochs 3 --threads 1 --plan "$tmp/pipe.json" --metrics "$tmp/m.jsonl" >"$tmp/train.out" 2>&1 &&
  ok "train --plan FILE runs the pipeline" || { cat "$tmp/train.out"; fail "train --plan FILE"; }
grep -q -- "): parallel = pipeline, stages = 2, ways = 1, chunks = 8, for 2 ranks" "$tmp/train.out" &&
  ok "the plan's layout applied" || fail "layout not reported"
/usr/bin/python3 - "$tmp/pipe.json" "$tmp/m.jsonl" "$tmp/train.out" <<'PY' && ok "stage bytes exact, memory within 2 %" || fail "stage bytes or memory differ"
import json, re, sys
c = next(c for c in json.load(open(sys.argv[1]))["candidates"] if c["recommended"])
epochs = [json.loads(l) for l in open(sys.argv[2])]
assert len(epochs) == 3
for e in epochs:
    assert e["stage_bytes"] == c["stage_bytes"], (e["stage_bytes"], c["stage_bytes"])
ranks = [float(x) for x in re.findall(r"rank \d+ \(stage \d+\) ([0-9.]+) MB", open(sys.argv[3]).read())]
assert len(ranks) == 2, ranks
measured, predicted = max(ranks), c["planned_bytes"] / 1e6
print(f"stage bytes {c['stage_bytes']} (plan = metrics); memory plan {predicted:.1f} MB planned, "
      f"{measured:.1f} MB printed")
assert abs(predicted - measured) <= 0.02 * measured, (predicted, measured)
PY
/usr/bin/python3 - "$tmp/plan.json" "$tmp/grid.json" <<'PY' && ok "a grid candidate 1 x 2" || fail "no grid candidate"
import json, sys
plan = json.load(open(sys.argv[1]))
found = False
for c in plan["candidates"]:
    c["recommended"] = False
    if c["feature_slices"] == 2 and c["recompute"] == "none":
        c["recommended"] = found = True
        assert c["parallel"] == "graph" and c["a2a_bytes"] > 0 and c["halo_bytes"] == 0, c
assert found
json.dump(plan, open(sys.argv[2], "w"))
PY
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
/usr/bin/python3 - "$tmp/plan4.json" "$tmp/sf.json" <<'PY' && ok "an S x F candidate 2 x 2 x 8" || fail "no S x F candidate"
import json, sys
plan = json.load(open(sys.argv[1]))
found = False
for c in plan["candidates"]:
    c["recommended"] = False
    if c["parallel"] == "pipeline" and (c["stages"], c["ways"], c["chunks"], c["feature_slices"]) == (2, 1, 8, 2):
        c["recommended"] = found = True
        assert c["stage_bytes"] > 0 and c["a2a_bytes"] > 0, c
assert found
json.dump(plan, open(sys.argv[2], "w"))
PY
timeout 240 "$mpiexec" -n 4 --oversubscribe "$strata" train --data "$data/cora.h5" "${model[@]}" \
  --epochs 2 --threads 1 --plan "$tmp/sf.json" --metrics "$tmp/sf.jsonl" >"$tmp/sf.out" 2>&1 &&
  ok "train --plan FILE runs S x F" || { cat "$tmp/sf.out"; fail "train --plan FILE (S x F)"; }
grep -q -- "): parallel = pipeline, stages = 2, ways = 1, chunks = 8, feature_slices = 2, for 4 ranks" \
  "$tmp/sf.out" && ok "the plan's S x F applied" || { grep "^plan" "$tmp/sf.out"; fail "S x F not reported"; }
/usr/bin/python3 - "$tmp/sf.json" "$tmp/sf.jsonl" "$tmp/sf.out" <<'PY' && ok "S x F: stage and a2a bytes exact, memory within 2 %" || fail "S x F bytes or memory differ"
import json, re, sys
c = next(c for c in json.load(open(sys.argv[1]))["candidates"] if c["recommended"])
epochs = [json.loads(l) for l in open(sys.argv[2])]
assert len(epochs) == 2
for e in epochs:
    got = (e["stage_bytes"], e["a2a_bytes"], e["recompute_a2a_bytes"])
    assert got == (c["stage_bytes"], c["a2a_bytes"], c["recompute_a2a_bytes"]), (got, c)
ranks = [float(x) for x in re.findall(r"rank \d+ \(stage \d+\) ([0-9.]+) MB", open(sys.argv[3]).read())]
assert len(ranks) == 4, ranks
measured, predicted = max(ranks), c["planned_bytes"] / 1e6
print(f"S x F: stage bytes {c['stage_bytes']}, a2a bytes {c['a2a_bytes']} (plan = metrics); "
      f"memory plan {predicted:.1f} MB planned, {measured:.1f} MB printed")
assert abs(predicted - measured) <= 0.02 * measured, (predicted, measured)
PY
# The hybrid: 2 stages x 2 ways, priced with the mirror lists of the chunks train makes.
/usr/bin/python3 - "$tmp/plan4.json" "$tmp/ways.json" <<'PY' && ok "a hybrid candidate 2 x 2 x 16" || fail "no hybrid candidate"
import json, sys
plan = json.load(open(sys.argv[1]))
found = False
for c in plan["candidates"]:
    c["recommended"] = False
    if c["parallel"] == "pipeline" and (c["stages"], c["ways"], c["chunks"], c["feature_slices"]) == (2, 2, 16, 1):
        c["recommended"] = found = True
        assert c["stage_bytes"] > 0 and c["way_bytes"] > 0, c
assert found
json.dump(plan, open(sys.argv[2], "w"))
PY
timeout 240 "$mpiexec" -n 4 --oversubscribe "$strata" train --data "$data/cora.h5" "${model[@]}" \
  --epochs 2 --threads 1 --plan "$tmp/ways.json" --metrics "$tmp/ways.jsonl" >"$tmp/ways.out" 2>&1 &&
  ok "train --plan FILE runs the hybrid" || { cat "$tmp/ways.out"; fail "train --plan FILE (hybrid)"; }
grep -q -- "): parallel = pipeline, stages = 2, ways = 2, chunks = 16, for 4 ranks" \
  "$tmp/ways.out" && ok "the plan's hybrid applied" || { grep "^plan" "$tmp/ways.out"; fail "hybrid not reported"; }
/usr/bin/python3 - "$tmp/ways.json" "$tmp/ways.jsonl" "$tmp/ways.out" <<'PY' && ok "hybrid: stage and mirror bytes exact, memory within 2 %" || fail "hybrid bytes or memory differ"
import json, re, sys
c = next(c for c in json.load(open(sys.argv[1]))["candidates"] if c["recommended"])
epochs = [json.loads(l) for l in open(sys.argv[2])]
assert len(epochs) == 2
for e in epochs:
    got = (e["stage_bytes"], e["way_bytes"])
    assert got == (c["stage_bytes"], c["way_bytes"]), (got, c)
ranks = [float(x) for x in re.findall(r"rank \d+ \(stage \d+\) ([0-9.]+) MB", open(sys.argv[3]).read())]
assert len(ranks) == 4, ranks
measured, predicted = max(ranks), c["planned_bytes"] / 1e6
print(f"hybrid: stage bytes {c['stage_bytes']}, mirror bytes {c['way_bytes']} (plan = metrics); "
      f"memory plan {predicted:.1f} MB planned, {measured:.1f} MB printed")
assert abs(predicted - measured) <= 0.02 * measured, (predicted, measured)
PY
finish
