#!/usr/bin/env bash
# Acceptance (3): `kill -9` of one rank of a running training job (train.sbatch, 2 tasks,
# srun --kill-on-bad-exit) ends the whole job — the other rank included — within 10 s, as a
# failure that is not requeued. Usage: check_kill9.sh REPO STRATA
set -u
repo=$1
strata=$2
source "$repo/tests/slurm/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

job=$(STRATA_BIN=$strata STRATA_DATA=$repo/data/cora.h5 STRATA_EPOCHS=100000 \
  STRATA_EPOCH_SLEEP_MS=100 STRATA_RUN_DIR=$tmp/run \
  sbatch --parsable "${test_sbatch_args[@]}" --output="$tmp/run.out" "$repo/scripts/slurm/train.sbatch")
has_epoch_3() { grep -q "^epoch    3 " "$tmp/run/train.log" 2>/dev/null; }
wait_until 240 has_epoch_3 || { fail "job $job never reached epoch 3"; cat "$tmp/run.out"; }
victim=$(rank_pids "$job" 1)
survivor=$(rank_pids "$job" 0)
if [ -z "$victim" ] || [ -z "$survivor" ]; then
  fail "cannot find the ranks of job $job (rank 1: '$victim', rank 0: '$survivor')"
  scancel "$job"
  finish
  exit 1
fi
start=$(date +%s%N)
kill -9 "$victim"
gone() { [ ! -d "/proc/$survivor" ] && job_ended "$job"; }
wait_until 30 gone
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
state=$(job_field "$job" JobState)
echo "kill -9 of rank 1 (pid $victim): job $job $state, rank 0 (pid $survivor) gone after ${elapsed_ms} ms"
if [ -d "/proc/$survivor" ] || ! job_ended "$job"; then
  fail "job $job still alive 30 s after kill -9 of one rank ($state)"
  scancel "$job"
elif [ "$elapsed_ms" -gt 10000 ]; then
  fail "the job took ${elapsed_ms} ms to end (limit 10 s)"
else
  ok "the whole job ended ${elapsed_ms} ms after kill -9 of one rank"
fi
[ "$state" = FAILED ] && [ "$(job_field "$job" Restarts)" = 0 ] && ok "it ended as FAILED, not requeued" ||
  fail "job state $state, restarts $(job_field "$job" Restarts)"
grep -q "strata train failed" "$tmp/run/train.log" && ok "train.log records the failure" ||
  fail "no failure line in train.log"
check_nodes "$job"
finish
