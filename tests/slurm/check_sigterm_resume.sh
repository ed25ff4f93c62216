#!/usr/bin/env bash
# Acceptance (2): a training job (train.sbatch, 2 tasks) gets `scancel --signal=TERM` mid-run;
# it writes a checkpoint at the next epoch boundary, exits 0 and requeues itself; the requeued
# job resumes from that checkpoint, and its final metrics and checkpoint equal those of an
# uninterrupted job, bit for bit. Usage: check_sigterm_resume.sh REPO STRATA
set -u
repo=$1
strata=$2
source "$repo/tests/slurm/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
export STRATA_BIN=$strata STRATA_DATA=$repo/data/cora.h5 STRATA_EPOCHS=60 STRATA_CHECKPOINT_EVERY=25
submit() {  # submit RUN_DIR [env...]: prints the job id
  local run=$1
  shift
  env STRATA_RUN_DIR="$run" "$@" sbatch --parsable "${test_sbatch_args[@]}" --output="$run.out" \
    "$repo/scripts/slurm/train.sbatch"
}

reference=$(submit "$tmp/reference")
wait_until 300 job_ended "$reference"
[ "$(job_field "$reference" JobState)" = COMPLETED ] && ok "uninterrupted job $reference completed" ||
  { fail "uninterrupted job: $(job_field "$reference" JobState)"; cat "$tmp/reference.out"; }

# The same job, slowed down (sleep only: same arithmetic) so that the signal lands mid-run.
job=$(submit "$tmp/stopped" STRATA_EPOCH_SLEEP_MS=150)
log=$tmp/stopped/train.log
has_epoch_10() { grep -q "^epoch   10 " "$log" 2>/dev/null; }
if wait_until 240 has_epoch_10; then
  scancel --signal=TERM "$job" && ok "scancel --signal=TERM $job after epoch 10 was logged"
else
  fail "job $job never reached epoch 10"
  cat "$tmp/stopped.out"
fi
wait_until 120 release_requeued "$job" || fail "job $job was not requeued"
wait_until 300 job_ended "$job"
state=$(job_field "$job" JobState)
restarts=$(job_field "$job" Restarts)
[ "$state" = COMPLETED ] && [ "$restarts" = 1 ] && ok "job $job completed after 1 requeue" ||
  { fail "job $job: $state after $restarts restarts"; cat "$tmp/stopped.out"; }

stop_line=$(grep "^strata train: stopped by SIGTERM after epoch" "$log")
stopped_at=$(echo "$stop_line" | sed -n 's/.*after epoch \([0-9]*\) of.*/\1/p')
echo "$stop_line"
[ -n "$stopped_at" ] && [ "$stopped_at" -ge 10 ] && [ "$stopped_at" -lt 60 ] &&
  ok "training stopped cleanly at the epoch boundary after $stopped_at epochs" || fail "no stop line"
grep -q "resuming from $tmp/stopped/checkpoints/ckpt-$(printf %06d "${stopped_at:-0}").h5 (epoch ${stopped_at:-0})" "$log" &&
  ok "the requeued job resumed from the epoch-$stopped_at checkpoint" || { fail "no resume line"; cat "$log"; }
if same_metrics "$tmp/reference/metrics.jsonl" "$tmp/stopped/metrics.jsonl" &&
  cmp -s "$tmp/reference/checkpoints/ckpt-000060.h5" "$tmp/stopped/checkpoints/ckpt-000060.h5"; then
  ok "final metrics and checkpoint equal the uninterrupted job's, bit for bit"
else
  fail "the resumed job differs from the uninterrupted one"
fi
[ "$(grep test_accuracy= "$tmp/reference/train.log")" = "$(grep test_accuracy= "$log")" ] &&
  ok "same test_accuracy line: $(grep test_accuracy= "$log")" || fail "final lines differ"
check_nodes "$job"
finish
