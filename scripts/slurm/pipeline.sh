#!/usr/bin/env bash
# Submits the whole path on a Slurm cluster: partition.sbatch (METIS into K parts), then
# train.sbatch on K ranks with --dependency=afterok on the partition job. Prints the job ids
# and where the run directories will be. See docs/slurm.md.
#
# Usage: scripts/slurm/pipeline.sh [--wait] DATA.h5 [K]
#   --wait   block until the training job has ended; exit 0 only if both jobs completed
# Environment: every STRATA_* variable of partition.sbatch and train.sbatch (STRATA_BIN,
# STRATA_RUNS, STRATA_EPOCHS, STRATA_TRAIN_ARGS, STRATA_SRUN_ARGS, ...), plus
#   STRATA_SBATCH_ARGS        sbatch flags for both jobs (e.g. "--account=abc --partition=gpu")
#   STRATA_TRAIN_SBATCH_ARGS  sbatch flags for the training job only (e.g. "--gpus-per-task=1")
#   STRATA_WAIT_TIMEOUT       seconds --wait waits at most (default 3600)
# The training job gets --ntasks=K, and --overcommit when K exceeds this node's CPUs
# (STRATA_OVERCOMMIT=1 forces it, 0 disables it).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
wait=0
if [ "${1:-}" = "--wait" ]; then
  wait=1
  shift
fi
[ $# -ge 1 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
data=$(realpath "$1")
parts=${2:-2}
[ -f "$data" ] || { echo "pipeline.sh: $data: no such file" >&2; exit 2; }

# The strata binary: $STRATA_BIN, else strata on PATH, else this checkout's release/dev build.
if [ -z "${STRATA_BIN:-}" ]; then
  for candidate in "$(command -v strata || true)" "$repo/build/release/apps/strata" \
    "$repo/build/dev/apps/strata"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      STRATA_BIN=$candidate
      break
    fi
  done
fi
[ -x "${STRATA_BIN:-}" ] || { echo "pipeline.sh: no strata binary (build it, or set STRATA_BIN)" >&2; exit 2; }
STRATA_BIN=$(realpath "$STRATA_BIN")
STRATA_RUNS=$(realpath -m "${STRATA_RUNS:-$PWD/runs}")
export STRATA_BIN STRATA_RUNS STRATA_DATA=$data STRATA_PARTS=$parts
mkdir -p "$STRATA_RUNS"

overcommit=()
if [ "${STRATA_OVERCOMMIT:-auto}" = 1 ] ||
  { [ "${STRATA_OVERCOMMIT:-auto}" = auto ] && [ "$parts" -gt "$(nproc)" ]; }; then
  overcommit=(--overcommit)
fi

# shellcheck disable=SC2086
partition_job=$(sbatch --parsable ${STRATA_SBATCH_ARGS:-} --output="$STRATA_RUNS/%x-%j.out" \
  "$here/partition.sbatch")
partition_job=${partition_job%%;*}
partition_dir=$STRATA_RUNS/partition-$partition_job/$(basename "$data" .h5).$parts
# shellcheck disable=SC2086
train_job=$(STRATA_DATA=$partition_dir sbatch --parsable ${STRATA_SBATCH_ARGS:-} \
  ${STRATA_TRAIN_SBATCH_ARGS:-} --ntasks="$parts" "${overcommit[@]}" \
  --dependency=afterok:"$partition_job" --kill-on-invalid-dep=yes \
  --output="$STRATA_RUNS/%x-%j.out" "$here/train.sbatch")
train_job=${train_job%%;*}
echo "partition job $partition_job -> $partition_dir"
echo "train job $train_job (afterok:$partition_job) -> $STRATA_RUNS/train-$train_job"
[ "$wait" = 1 ] || exit 0

# --wait: poll until the training job has left the queue for good.
deadline=$(($(date +%s) + ${STRATA_WAIT_TIMEOUT:-3600}))
state=""
while [ "$(date +%s)" -lt "$deadline" ]; do
  state=$(scontrol show job "$train_job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case "$state" in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) break ;;
  esac
  sleep 1
done
echo "train job $train_job: ${state:-unknown}"
[ "$state" = COMPLETED ]
