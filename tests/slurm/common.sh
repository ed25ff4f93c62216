#!/usr/bin/env bash
# Shared helpers of the Slurm tests (sourced): SLURM_CONF of the fixture's cluster, job state
# queries through scontrol (accounting is off), bounded waits, pass/fail counters.
set -u
export SLURM_CONF=${STRATA_SLURM_DIR:-/tmp/strata-slurm}/slurm.conf
[ -f "$SLURM_CONF" ] || { echo "FAIL: no $SLURM_CONF (is the slurm_up fixture running?)"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/../support/counters.sh"

# job_field JOB FIELD: e.g. job_field 12 JobState -> RUNNING
job_field() {
  scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}

# wait_until SECONDS COMMAND...: polls every 0.2 s; returns 1 on timeout.
wait_until() {
  local deadline=$(($(date +%s) + $1))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

job_ended() {  # job_ended JOB: a final state
  case "$(job_field "$1" JobState)" in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL) return 0 ;;
    *) return 1 ;;
  esac
}

# A requeued job is held ~2 minutes (Slurm's requeue delay); make it eligible sooner. Not at
# once: slurmd refuses a credential issued in the same second as the revocation of the previous
# attempt's ("Job credential revoked"), which is what the delay protects against.
release_requeued() {  # release_requeued JOB: true once it was requeued and released
  [ "$(job_field "$1" Restarts)" -ge 1 ] 2>/dev/null || return 1
  [ "$(job_field "$1" JobState)" = PENDING ] || return 0  # already running again
  sleep 3
  scontrol update jobid="$1" StartTime=now >/dev/null 2>&1
  return 0
}

# PIDs of the `strata` (or test build `strata-testing`) processes of job JOB with rank
# (SLURM_PROCID) RANK, from /proc.
rank_pids() {  # rank_pids JOB RANK
  local p comm
  for p in /proc/[0-9]*; do
    comm=$(cat "$p/comm" 2>/dev/null)
    [ "$comm" = strata ] || [ "$comm" = strata-testing ] || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "SLURM_JOB_ID=$1" || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "SLURM_PROCID=$2" || continue
    echo "${p#/proc/}"
  done
}

# Several nodes (tests/cluster: the emulated cluster's Slurm): STRATA_SLURM_TEST_NODES=N makes
# the training jobs ask for N nodes, one task each, and check_nodes checks that they got them.
test_sbatch_args=()
if [ -n "${STRATA_SLURM_TEST_NODES:-}" ]; then
  test_sbatch_args=(--nodes="$STRATA_SLURM_TEST_NODES" --ntasks-per-node=1)
fi
check_nodes() {  # check_nodes JOB
  [ -n "${STRATA_SLURM_TEST_NODES:-}" ] || return 0
  local n list
  n=$(job_field "$1" NumNodes)
  list=$(job_field "$1" NodeList)
  [ "$n" = "$STRATA_SLURM_TEST_NODES" ] && ok "job $1 ran on $n nodes ($list), one task each" ||
    fail "job $1 ran on '$n' nodes ($list), expected $STRATA_SLURM_TEST_NODES"
}

# Same metrics (the deterministic fields), exact float equality as printed.
same_metrics() {  # same_metrics A.jsonl B.jsonl
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
def load(path):
    # The deterministic fields (timings and memory differ from run to run).
    keep = ("epoch", "loss", "train_acc", "val_acc", "test_acc", "val_loss", "halo_bytes",
            "allreduce_bytes")
    return [{k: json.loads(line)[k] for k in keep} for line in open(path)]
a, b = load(sys.argv[1]), load(sys.argv[2])
if a != b:
    diff = [i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y]
    print(f"metrics differ: {len(a)} vs {len(b)} lines, first differing epochs {diff[:5]}")
    sys.exit(1)
PY
}
