#!/usr/bin/env bash
# Elastic resume (graph parallelism): a run on K = 2 ranks stopped by SIGTERM after epoch 10 and
# resumed on K = 1 and on K = 4 (oversubscribed), from the .h5 (partitioned in memory for the new
# K) and from a partition directory cut for the new K, gives the per-epoch losses of an
# uninterrupted K = 2 run within 1e-5 (relative) and accuracies within one vertex. The
# elastic-resume line names both partitions. A fresh conversion of the same data (same content id)
# resumes too. A layer-pipeline checkpoint resumed with another layout, and a graph checkpoint
# resumed on another dataset, are refused with one clear line.
# Usage: check_elastic_resume.sh MPIEXEC STRATA_TESTING DATA_DIR
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
source "$(dirname "$0")/checks.sh"
cd "$tmp" || exit 1

train() {  # train K DATA DIR METRICS [extra args...]
  local k=$1 input=$2 dir=$3 metrics=$4
  shift 4
  timeout 200 "$mpiexec" -n "$k" "$strata" train --data "$input" --epochs 30 --threads 1 \
    --checkpoint-dir "$dir" --checkpoint-every 5 --metrics "$metrics" "$@"
}

# Losses within 1e-5 relative, accuracies within one vertex of the split (Cora: 140/500/1000).
close_metrics() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
if len(a) != len(b):
    sys.exit(f"{len(a)} vs {len(b)} epochs")
sizes = {"train_acc": 140, "val_acc": 500, "test_acc": 1000}
worst = 0.0
for x, y in zip(a, b):
    for k in ("loss", "val_loss"):
        if k in x:
            rel = abs(x[k] - y[k]) / max(abs(x[k]), 1e-30)
            worst = max(worst, rel)
            if rel > 1e-5:
                sys.exit(f"epoch {x['epoch']}: {k} {x[k]} vs {y[k]} (relative {rel:.2e})")
    for k, n in sizes.items():
        if k in x and abs(x[k] - y[k]) * n > 1.0 + 1e-9:
            sys.exit(f"epoch {x['epoch']}: {k} {x[k]} vs {y[k]} (more than one vertex)")
print(f"worst relative loss difference {worst:.2e}")
PY
}

train 2 "$data/cora.h5" full full.jsonl >full.out 2>&1 || fail "uninterrupted K=2 run exited $?"
STRATA_INJECT_SIGNAL=1:10 train 2 "$data/cora.h5" stop stop.jsonl >stop.out 2>&1
rc=$?
[ "$rc" -eq 0 ] && grep -q "checkpoint stop/ckpt-000010.h5 written" stop.out &&
  ok "K=2 run stopped after epoch 10 (exit 0)" || { fail "K=2 stop: exit $rc"; cat stop.out; }

resume_case() {  # resume_case K DATA WHAT
  local k=$1 input=$2 what=$3
  must rm -rf "ck$k"
  must cp -r stop "ck$k"
  must cp stop.jsonl "m$k.jsonl"
  train "$k" "$input" "ck$k" "m$k.jsonl" --resume >"resume$k.out" 2>&1
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "$what: exit $rc"
    cat "resume$k.out"
    return
  fi
  if ! grep -q "elastic resume: the checkpoint was written on 'in memory, ptscotch, seed 0, 2 parts', this run has '.*$k part" "resume$k.out" ||
    ! grep -q "resuming from ck$k/ckpt-000010.h5 (epoch 10)" "resume$k.out"; then
    fail "$what: no elastic-resume / resuming line"
    cat "resume$k.out"
    return
  fi
  local diff
  if diff=$(close_metrics full.jsonl "m$k.jsonl"); then
    ok "$what: losses within 1e-5 of the uninterrupted K=2 run ($diff)"
  else
    fail "$what: $diff"
  fi
}
resume_case 1 "$data/cora.h5" "K=2 -> K=1 from the .h5"
resume_case 4 "$data/cora.h5" "K=2 -> K=4 (oversubscribed) from the .h5"
timeout 120 "$mpiexec" -n 1 "$strata" partition --data "$data/cora.h5" --parts 3 --out cora.3 \
  >part.out 2>&1 || { fail "partition into 3 exited $?"; cat part.out; }
resume_case 3 cora.3 "K=2 -> K=3 from a partition directory"
# The same arrays converted again (another file, the same content id): the checkpoint resumes.
"$strata" convert --from text "$data/cora" --name cora --out again.h5 >/dev/null ||
  fail "convert again exited $?"
resume_case 1 again.h5 "K=2 -> K=1 on a fresh conversion of the same data (same content id)"

# Still refused: another dataset (the same arrays under another name: another content id, one
# clear line).
"$strata" convert --from text "$data/cora" --name cora-copy --out other.h5 >/dev/null ||
  fail "convert cora-copy exited $?"
must rm -rf ckx
must cp -r stop ckx
train 1 other.h5 ckx x.jsonl --resume >other.out 2>&1
rc=$?
is_error "$rc" && grep -q "this checkpoint was trained on another dataset" other.out &&
  [ "$(grep -c error other.out)" -eq 1 ] && ok "another dataset is still refused (one line)" ||
  { fail "another dataset: exit $rc"; cat other.out; }

# Layer pipeline: another number of ranks is refused with a line saying why.
pipe() {  # pipe K DIR [extra...]
  local k=$1 dir=$2
  shift 2
  timeout 200 "$mpiexec" -n "$k" "$strata" train --data "$data/cora.h5" --epochs 6 --threads 1 \
    --parallel pipeline --model gcnii --layers 4 --chunks 4 --checkpoint-dir "$dir" "$@"
}
pipe 2 pk >pk.out 2>&1 || { fail "pipeline K=2 run exited $?"; cat pk.out; }
pipe 1 pk --resume >pk1.out 2>&1
rc=$?
is_error "$rc" && grep -q "a layer-pipeline run keeps each stage's state on its ranks" pk1.out &&
  ok "a pipeline checkpoint resumed on another layout is refused, saying why" ||
  { fail "pipeline K=2 -> K=1: exit $rc"; cat pk1.out; }

finish
