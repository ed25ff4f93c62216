#!/usr/bin/env bash
# `strata train --parallel pipeline --checkpoint-dir/--resume` on 2 ranks (2 stages): a run
# interrupted after epoch 6 and resumed ends exactly as an uninterrupted one (metrics, guard
# actions and final checkpoint, bit for bit) — stopped at the end of a shorter run, and stopped by
# SIGTERM after an accuracy-guard rollback (which changed the chunks and the snapshot period and
# put the best tracker back); the typed /pipeline section of format 5; a pipeline checkpoint is
# refused by a graph-parallel run and one without its /pipeline section is refused; a
# graph-parallel checkpoint has no /pipeline section; 2 stages x 2 feature slices (4 ranks) and
# 1 stage x 2 ways x 2 feature slices (4 ranks, S x W x F) resumed equal uninterrupted.
# Usage: check_resume_pipeline.sh MPIEXEC STRATA_TESTING DATA_DIR (the test build)
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
source "$(dirname "$0")/checks.sh"
cd "$tmp" || exit 1

# train DIR METRICS EPOCHS [extra args...]: GCNII-4 over 2 stages, 4 chunks, stale rows from a
# snapshot every 3 epochs and historical gradients kept (T2 off): every kind of history.
train() {
  local dir=$1 metrics=$2 epochs=$3
  shift 3
  timeout 120 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" --epochs "$epochs" \
    --threads 1 --model gcnii --layers 4 --parallel pipeline --stages 2 --chunks 4 \
    --snapshot-period 3 --grad-zero-scale off --checkpoint-dir "$dir" --checkpoint-every 3 \
    --metrics "$metrics" "$@"
}

# Same deterministic metrics (timings and memory differ from run to run), equal as printed.
same_metrics() {
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import json, sys
keep = ("epoch", "loss", "train_acc", "val_acc", "test_acc", "val_loss", "eval_train_loss",
        "halo_bytes", "allreduce_bytes", "stage_bytes", "chunks", "snapshot_period", "guard")
def load(path):
    return [{k: json.loads(line).get(k) for k in keep} for line in open(path)]
a, b = load(sys.argv[1]), load(sys.argv[2])
if len(a) != 12 or a != b:
    diff = [i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y]
    print(f"metrics differ: {len(a)} vs {len(b)} lines, first differing epochs {diff[:5]}")
    sys.exit(1)
EOF
}

# 1. Guard on, no rollback: 12 epochs straight; 6 epochs (checkpoint at 3 and 6), resumed to 12.
train full full.jsonl 12 >full.out 2>&1 || fail "uninterrupted run exited $?"
train part part.jsonl 6 >part.out 2>&1 || fail "6-epoch run exited $?"
must cp part/ckpt-000006.h5 ckpt6.h5  # the resumed run keeps only the newest two
train part part.jsonl 12 --resume >resume.out 2>&1 || fail "resumed run exited $?"
if grep -q "resuming from part/ckpt-000006.h5 (epoch 6)" resume.out && same_metrics full.jsonl part.jsonl &&
  cmp -s full/ckpt-000012.h5 part/ckpt-000012.h5 &&
  grep -q test_accuracy= full.out &&
  [ "$(grep test_accuracy= full.out)" = "$(grep test_accuracy= resume.out)" ]; then
  ok "6 epochs + resume to 12 = 12 epochs (metrics and final checkpoint, bit for bit)"
else
  fail "resumed pipeline run differs from the uninterrupted one"
  cat resume.out
fi
if /usr/bin/python3 -c "
import h5py, sys
f = h5py.File('ckpt6.h5', 'r')
p = f['pipeline']
assert f.attrs['strata_format_version'] == 5 and p.attrs['ranks'] == 2
assert sorted(p) == ['guard', 'rank_00000', 'rank_00001'], sorted(p)
for r in ('rank_00000', 'rank_00001'):  # settings as integers: chunks, period, has-snapshot
    assert p[r]['settings'].dtype == 'int64' and list(p[r]['settings'][:]) == [4, 3, 1]
h = p['rank_00001']  # stage 1 holds the aggregations: each tensor a matrix, named
assert h.attrs['embeddings'] == 4 and h.attrs['snapshot'] == 4 and h.attrs['gradients'] == 4
assert h['embeddings_0000'].shape == (2708, 64) and h['embeddings_0000'].attrs['tensor']
g = p['guard']
assert g.attrs['select_by'] == b'val_loss' and g.attrs['triggers'] == 0
assert g['parameters'].dtype == 'float32' and g.attrs['good_epoch'] == 6
assert g.attrs['tracker_pending'] == 1  # epoch 6 was good: its best is taken at the next review
datasets = []
p.visititems(lambda name, o: datasets.append(o) if isinstance(o, h5py.Dataset) else None)
assert all(d.attrs['checksum'].decode().startswith('fnv1a64:') for d in datasets)
"; then
  ok "the checkpoint holds both ranks' histories (typed) and the guard state, with checksums"
else
  fail "/pipeline section"
fi

# 2. A higher learning rate and a staleness-gap bound every evaluation passes (0.05; the gap is
#    0.15-0.23 here), its streak to span 4 epochs: the guard rolls back after epoch 5 (chunks
#    4 -> 2, snapshot period 3 -> 1, the initial weights and best tracker: no evaluation was
#    good); SIGTERM on rank 1 after epoch 6 stops both (every rank hands in its history and the
#    guard its streak); the resumed run rolls back again at epoch 10 as the uninterrupted one.
train full2 full2.jsonl 12 --lr 0.03 --guard-window 4 --guard-bound 0.05 --select-by val_acc >full2.out 2>&1 ||
  fail "uninterrupted run (lr 0.03) exited $?"
STRATA_INJECT_SIGNAL=1:6 train part2 part2.jsonl 12 --lr 0.03 --guard-window 4 --guard-bound 0.05 --select-by val_acc \
  >stop2.out 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "guard after epoch 5: rollback 1" stop2.out &&
  grep -q "stopped by SIGTERM after epoch 6 of 12: checkpoint part2/ckpt-000006.h5 written" stop2.out; then
  ok "a rollback, then SIGTERM on one rank: a clean stop with a checkpoint"
else
  fail "stop after a rollback: exit $rc"
  cat stop2.out
fi
train part2 part2.jsonl 12 --lr 0.03 --guard-window 4 --guard-bound 0.05 --select-by val_acc --resume >resume2.out 2>&1 ||
  fail "resumed run (lr 0.03) exited $?"
if grep -q "guard after epoch 10: rollback 2" resume2.out && same_metrics full2.jsonl part2.jsonl &&
  cmp -s full2/ckpt-000012.h5 part2/ckpt-000012.h5 &&
  [ "$(grep "^best epoch" full2.out)" = "$(grep "^best epoch" resume2.out)" ]; then
  ok "stopped + resumed after a guard rollback = uninterrupted (guard state and settings restored)"
else
  fail "resumed run after a rollback differs from the uninterrupted one"
  cat resume2.out
fi

# 3. Refusals: a graph-parallel run on a pipeline checkpoint; a checkpoint without /pipeline.
timeout 120 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" --epochs 12 --threads 1 \
  --model gcnii --layers 4 --checkpoint-dir part --resume >graph.out 2>&1
rc=$?
is_error "$rc" &&
  grep -q "this checkpoint was written by a parallel = pipeline run but this run has parallel = graph" graph.out &&
  ok "a graph-parallel run refuses a pipeline checkpoint" || { fail "graph on pipeline: exit $rc"; cat graph.out; }
must mkdir stripped
must cp ckpt6.h5 stripped/ckpt-000006.h5
must /usr/bin/python3 -c "import h5py; f = h5py.File('stripped/ckpt-000006.h5', 'r+'); del f['pipeline']"
train stripped stripped.jsonl 12 --resume >stripped.out 2>&1
rc=$?
is_error "$rc" && grep -q "cannot continue this run exactly" stripped.out &&
  ok "a pipeline run refuses a checkpoint without pipeline state" || { fail "stripped: exit $rc"; cat stripped.out; }

# 4. Graph parallelism writes no /pipeline section (version 5).
timeout 120 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" --epochs 2 --threads 1 \
  --checkpoint-dir graph >graph2.out 2>&1 || fail "graph-parallel run exited $?"
/usr/bin/python3 -c "
import h5py
f = h5py.File('graph/ckpt-000002.h5', 'r')
assert f.attrs['strata_format_version'] == 5 and 'pipeline' not in f
assert sorted(f) == ['best', 'model', 'optimizer', 'progress']
" && ok "a graph-parallel checkpoint has no /pipeline section" || fail "graph-parallel checkpoint layout"

# 5. Feature slices inside the stages (2 stages x 2 slices on 4 ranks): every rank's history is
# its slice's rows; resumed, the slices' mirrors are rebuilt from it (guard on: its measurement
# restores the history at every evaluation too).
train4() {
  local dir=$1 metrics=$2 epochs=$3
  shift 3
  timeout 120 "$mpiexec" -n 4 --oversubscribe "$strata" train --data "$data/cora.h5" \
    --epochs "$epochs" --threads 1 --model gcnii --layers 4 --parallel pipeline \
    ${LAYOUT:---stages 2} --feature-slices 2 --chunks 4 --snapshot-period 3 \
    --grad-zero-scale off --checkpoint-dir "$dir" --checkpoint-every 3 --metrics "$metrics" "$@"
}
train4 sfull sfull.jsonl 12 >sfull.out 2>&1 || fail "S x F uninterrupted run exited $?"
train4 spart spart.jsonl 6 >spart.out 2>&1 || fail "S x F 6-epoch run exited $?"
train4 spart spart.jsonl 12 --resume >sresume.out 2>&1 || fail "S x F resumed run exited $?"
if grep -q "resuming from spart/ckpt-000006.h5 (epoch 6)" sresume.out &&
  same_metrics sfull.jsonl spart.jsonl; then
  ok "2 stages x 2 feature slices: resumed after epoch 6 equals the uninterrupted run"
else
  fail "S x F resumed run differs from the uninterrupted one"
  tail -5 sresume.out
fi

# 6. Feature slices inside the hybrid's ways (1 stage x 2 ways x 2 slices): the history comes
# from the slices' mirrors, which hold the other way's rows.
export LAYOUT="--stages 1 --ways 2"
train4 wfull wfull.jsonl 12 >wfull.out 2>&1 || fail "S x W x F uninterrupted run exited $?"
train4 wpart wpart.jsonl 6 >wpart.out 2>&1 || fail "S x W x F 6-epoch run exited $?"
train4 wpart wpart.jsonl 12 --resume >wresume.out 2>&1 || fail "S x W x F resumed run exited $?"
unset LAYOUT
if grep -q "resuming from wpart/ckpt-000006.h5 (epoch 6)" wresume.out &&
  same_metrics wfull.jsonl wpart.jsonl; then
  ok "1 stage x 2 ways x 2 feature slices: resumed after epoch 6 equals the uninterrupted run"
else
  fail "S x W x F resumed run differs from the uninterrupted one"
  tail -5 wresume.out
fi

finish
