#!/usr/bin/env bash
# Acceptance (1): scripts/slurm/pipeline.sh on Cora with 2 tasks (partition job, then the
# training job with afterok) finishes, and the training log holds the final test accuracy in
# the expected band. Usage: check_pipeline.sh REPO STRATA
set -u
repo=$1
strata=$2
source "$repo/tests/slurm/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

STRATA_BIN=$strata STRATA_RUNS=$tmp/runs STRATA_EPOCHS=200 STRATA_WAIT_TIMEOUT=400 \
  STRATA_TRAIN_SBATCH_ARGS="${test_sbatch_args[*]}" \
  STRATA_TRAIN_ARGS="--row-normalize-features --seed 1" \
  "$repo/scripts/slurm/pipeline.sh" --wait "$repo/data/cora.h5" 2 >pipeline.out 2>&1
rc=$?
cat pipeline.out
partition_job=$(sed -n 's/^partition job \([0-9]*\).*/\1/p' pipeline.out | head -n1)
train_job=$(sed -n 's/^train job \([0-9]*\).*/\1/p' pipeline.out | head -n1)
[ "$rc" -eq 0 ] && ok "pipeline.sh --wait: the training job completed" || fail "pipeline.sh exited $rc"
[ "$(job_field "$partition_job" JobState)" = COMPLETED ] && ok "partition job $partition_job completed" ||
  fail "partition job: $(job_field "$partition_job" JobState)"
[ -f "runs/partition-$partition_job/cora.2/partition.json" ] && ok "partition directory written" ||
  fail "no partition directory"
log=runs/train-$train_job/train.log
acc=$(sed -n 's/^test_accuracy=\([0-9.]*\)$/\1/p' "$log" | tail -n1)
echo "final test accuracy: ${acc:-none}"
if [ -n "$acc" ] && awk -v a="$acc" 'BEGIN { exit !(a >= 0.77 && a <= 0.85) }'; then
  ok "final test accuracy $acc in [0.77, 0.85]"
else
  fail "final test accuracy '${acc}' (log $log)"
  tail -n 20 "$log"
fi
[ "$(wc -l <"runs/train-$train_job/metrics.jsonl")" -eq 200 ] && [ -d "runs/train-$train_job/checkpoints" ] &&
  ok "run directory holds train.log, metrics.jsonl (200 lines), checkpoints/" || fail "run directory"
grep -q "ranks=2" "$log" && ok "2 ranks" || fail "not 2 ranks"
check_nodes "$train_job"
finish
