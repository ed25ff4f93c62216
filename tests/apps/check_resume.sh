#!/usr/bin/env bash
# `strata train --checkpoint-dir/--resume` on 2 ranks: a run stopped by SIGTERM (delivered to
# rank 1 only) and resumed ends exactly as an uninterrupted run (metrics and final checkpoint,
# bit for bit); a truncated newest checkpoint is reported and the previous one used; another
# model or a non-empty directory without --resume is refused; resuming a finished run is a no-op.
# Usage: check_resume.sh MPIEXEC STRATA_TESTING DATA_DIR (the test build: STRATA_INJECT_SIGNAL)
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
source "$(dirname "$0")/checks.sh"
cd "$tmp" || exit 1

train() {  # train DIR METRICS [extra args...]
  local dir=$1 metrics=$2
  shift 2
  timeout 120 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" --epochs 30 --threads 1 \
    --checkpoint-dir "$dir" --checkpoint-every 4 --metrics "$metrics" "$@"
}

# Same metrics (the deterministic fields); equal floats as printed (shortest round trip).
same_metrics() {
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import json, sys
def load(path):
    # The deterministic fields (timings and memory differ from run to run).
    keep = ("epoch", "loss", "train_acc", "val_acc", "test_acc", "val_loss", "halo_bytes",
            "allreduce_bytes")
    return [{k: json.loads(line)[k] for k in keep} for line in open(path)]
a, b = load(sys.argv[1]), load(sys.argv[2])
if len(a) != len(b) or a != b:
    diff = [i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y]
    print(f"metrics differ: {len(a)} vs {len(b)} lines, first differing epochs {diff[:5]}")
    sys.exit(1)
EOF
}

train full full.jsonl >full.out 2>&1 || fail "uninterrupted run exited $?"
[ "$(ls full)" = "$(printf 'ckpt-000028.h5\nckpt-000030.h5')" ] && ok "the newest two checkpoints are kept" ||
  fail "checkpoint files: $(ls full | tr '\n' ' ')"

# SIGTERM on rank 1 after epoch 10: both ranks stop there, checkpoint, exit 0.
STRATA_INJECT_SIGNAL=1:10 train part part.jsonl >stop.out 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "stopped by SIGTERM after epoch 10 of 30: checkpoint part/ckpt-000010.h5 written" stop.out &&
  [ -f part/ckpt-000010.h5 ] && [ "$(wc -l <part.jsonl)" -eq 10 ]; then
  ok "SIGTERM on one rank stops every rank after the epoch, with a checkpoint and exit 0"
else
  fail "stop: exit $rc, $(wc -l <part.jsonl) metrics lines"
  cat stop.out
fi
must cp -r part broken
must cp part.jsonl broken.jsonl

train part part.jsonl --resume >resume.out 2>&1 || fail "resumed run exited $?"
grep -q "resuming from part/ckpt-000010.h5 (epoch 10)" resume.out && ok "resumes from epoch 10" ||
  fail "no resume line"
if same_metrics full.jsonl part.jsonl && cmp -s full/ckpt-000030.h5 part/ckpt-000030.h5; then
  ok "stopped + resumed = uninterrupted (metrics and final checkpoint, bit for bit)"
else
  fail "resumed run differs from the uninterrupted one"
fi
grep -q test_accuracy= full.out && [ "$(grep test_accuracy= full.out)" = "$(grep test_accuracy= resume.out)" ] &&
  ok "same final test_accuracy line" || fail "final lines differ"

# A truncated newest checkpoint: reported, set aside, the previous one (epoch 8) is used.
must truncate -s 3000 broken/ckpt-000010.h5
train broken broken.jsonl --resume >broken.out 2>&1 || fail "resume past a truncated checkpoint exited $?"
if grep -q "warning: skipping unreadable checkpoint ckpt-000010.h5" broken.out &&
  grep -q "resuming from broken/ckpt-000008.h5 (epoch 8)" broken.out &&
  grep -q "renamed to ckpt-000010.h5.corrupt" broken.out && same_metrics full.jsonl broken.jsonl &&
  cmp -s full/ckpt-000030.h5 broken/ckpt-000030.h5; then
  ok "a truncated newest checkpoint is reported and the previous one gives the same run"
else
  fail "fallback past a truncated checkpoint"
  cat broken.out
fi

# Refusals: another model; a directory with checkpoints but no --resume.
train part other.jsonl --resume --hidden 32 >other.out 2>&1
rc=$?
is_error "$rc" && grep -q "belongs to a different model" other.out && ok "another model is refused" ||
  { fail "another model: exit $rc"; cat other.out; }
train part again.jsonl >again.out 2>&1
rc=$?
is_error "$rc" && grep -q "already holds checkpoints" again.out &&
  ok "a run without --resume does not overwrite checkpoints" || fail "no --resume: exit $rc"

# Resuming a finished run does nothing and reports the same result.
train part part.jsonl --resume >done.out 2>&1 || fail "resume of a finished run exited $?"
grep -q "training is already complete (all epochs at epoch 30)" done.out &&
  [ "$(grep test_accuracy= full.out)" = "$(grep test_accuracy= done.out)" ] &&
  same_metrics full.jsonl part.jsonl && ok "resuming a finished run is a no-op" ||
  { fail "finished run"; cat done.out; }

finish
