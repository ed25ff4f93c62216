#!/usr/bin/env bash
# `strata train --overlap on|off` on Cora at 2 ranks x 1 thread, and the epoch time's parts:
# - the losses, validation losses and accuracies of every epoch are bitwise equal with the
#   inner SpMM in row blocks with MPI progress calls (on) and in one call (off);
# - the start-up lines name the overlap mode and the thread rule, the metrics carry both;
# - in both runs' metrics compute_s + wait_s + eval_s == epoch_s and compute_s + wait_s ==
#   train_s (to double rounding), every part >= 0;
# - scripts/plot_metrics stacks exactly those parts (time_parts), and for a schema-4 record
#   never more than epoch_s;
# - --profile gives the same losses and per-epoch phases that add up to train_s.
# Usage: check_overlap.sh MPIEXEC STRATA DATA_DIR
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
source "$(dirname "$0")/checks.sh"
run() {  # run MODE [args...]
  local mode=$1
  shift
  timeout 240 "$mpiexec" -n 2 --oversubscribe "$strata" train --data "$data/cora.h5" \
    --layers 3 --hidden 64 --epochs 12 --eval-every 3 --threads 1 --seed 5 \
    --overlap "$mode" --metrics "$tmp/$mode.jsonl" "$@" >"$tmp/$mode.out" 2>&1
}
run on && ok "train --overlap on" || { cat "$tmp/on.out"; fail "train --overlap on"; }
run off && ok "train --overlap off" || { cat "$tmp/off.out"; fail "train --overlap off"; }
grep -q '^overlap: on (inner SpMM in row blocks' "$tmp/on.out" && grep -q '^overlap: off' "$tmp/off.out" &&
  ok "start-up lines name the overlap mode" || fail "overlap start-up line"
grep -q '^threads: 1 per rank (threads = 1)' "$tmp/on.out" && ok "start-up line names the thread rule" ||
  fail "threads start-up line"

/usr/bin/python3 - "$tmp/on.jsonl" "$tmp/off.jsonl" <<'PY' && ok "on and off: bitwise equal losses and accuracies" || fail "on vs off"
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(b) == 12, (len(a), len(b))
for x, y in zip(a, b):
    for key in ("loss", "val_loss", "eval_train_loss", "train_acc", "val_acc", "test_acc",
                "halo_bytes"):
        assert x.get(key) == y.get(key), (x["epoch"], key, x.get(key), y.get(key))
assert sum(1 for x in a if x["evaluated"]) == 4
PY

/usr/bin/python3 - "$tmp/on.jsonl" "$tmp/off.jsonl" <<'PY' && ok "compute_s + wait_s + eval_s == epoch_s in both runs" || fail "time parts"
import json, sys
for path, mode in zip(sys.argv[1:], ("on", "off")):
    for r in (json.loads(l) for l in open(path)):
        assert r["schema_version"] == 10 and r["overlap"] == mode and r["threads"] == 1, r
        parts = (r["compute_s"], r["wait_s"], r["eval_s"])
        assert all(p >= 0.0 for p in parts), (path, r)
        total = r["epoch_s"]
        assert abs(sum(parts) - total) <= 1e-12 * max(total, 1e-3), (path, r["epoch"], parts, total)
        assert abs(r["compute_s"] + r["wait_s"] - r["train_s"]) <= 1e-12, (path, r)
        assert r["eval_s"] > 0.0 or not r["evaluated"], (path, r)
        assert r["max_wait_s"] >= 0.0
PY

/usr/bin/python3 - "$here/../../scripts/plot_metrics" "$tmp/on.jsonl" <<'PY' && ok "plot_metrics stacks the parts that add up" || fail "plot_metrics parts"
import importlib.machinery, importlib.util, json, sys
loader = importlib.machinery.SourceFileLoader("plot_metrics", sys.argv[1])
spec = importlib.util.spec_from_loader("plot_metrics", loader)
plot = importlib.util.module_from_spec(spec)
loader.exec_module(plot)
records = plot.read_records(sys.argv[2])
parts = plot.time_parts(records)
labels = [p[0] for p in parts]
assert labels[:2] == ["compute", "exposed wait"] and "evaluation" in labels, labels
assert all("schema < 5" not in l for l in labels), labels
for i, r in enumerate(records):
    assert abs(sum(p[2][i] for p in parts) - r["epoch_s"]) <= 1e-12, (i, r)
old = [{"schema_version": 4, "epoch": 1, "epoch_s": 1.0, "compute_s": 0.9, "wait_s": 0.3}]
parts = plot.time_parts(old)
assert abs(sum(p[2][0] for p in parts) - 1.0) <= 1e-12, parts  # never more than the epoch
PY

# --profile: the same losses, and per epoch phases that add up to the training step (the
# untimed rest in other_s).
timeout 240 "$mpiexec" -n 2 --oversubscribe "$strata" train --data "$data/cora.h5" \
  --layers 3 --hidden 64 --epochs 12 --eval-every 3 --threads 1 --seed 5 --profile \
  --metrics "$tmp/profile.jsonl" >"$tmp/profile.out" 2>&1 && ok "train --profile" ||
  { cat "$tmp/profile.out"; fail "train --profile"; }
[ "$(grep -c '^  profile: gemm ' "$tmp/profile.out")" = 12 ] && ok "a profile line per epoch" ||
  fail "profile lines"
/usr/bin/python3 - "$tmp/profile.jsonl" "$tmp/on.jsonl" <<'PY' && ok "--profile: same losses, phases add up to train_s" || fail "profile phases"
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
assert len(a) == len(b) == 12
keys = {"gemm_s", "aggregation_s", "attention_s", "elementwise_s", "loss_s", "exposed_wait_s",
        "optimizer_s", "other_s"}
for x, y in zip(a, b):
    assert x["loss"] == y["loss"] and x.get("val_loss") == y.get("val_loss"), (x["epoch"],)
    p = x["phases"]
    assert set(p) == keys and all(v >= 0.0 for k, v in p.items() if k != "other_s"), p
    assert p["gemm_s"] > 0 and p["aggregation_s"] > 0 and p["elementwise_s"] > 0, p
    assert abs(sum(p.values()) - x["train_s"]) <= 1e-9, (x["epoch"], p, x["train_s"])
    assert p["other_s"] >= -1e-6, p
assert all("phases" not in y for y in b)
PY
"$strata" train --data "$data/cora.h5" --parallel pipeline --profile >"$tmp/pp.out" 2>&1
rc=$?
is_error "$rc" && grep -q "profile = true: times graph parallelism's training step" "$tmp/pp.out" &&
  ok "--profile with the pipeline is refused, saying why" ||
  { cat "$tmp/pp.out"; fail "pipeline --profile: exit $rc"; }

finish
