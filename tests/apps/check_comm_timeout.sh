#!/usr/bin/env bash
# --comm-timeout: a rank that stops responding (STRATA_INJECT_STALL: rank 1 sleeps an hour at
# the start of epoch 3) ends the job within the limit plus a few seconds, with one line from
# the waiting rank naming rank 1 and the operation, once and last in stderr — graph
# parallelism and the layer pipeline; with checkpoints, the run resumes afterwards and ends as
# an uninterrupted one. Loading is bounded too: rank 0's serial METIS (--partition-method
# metis) or chunk partition (the layer pipeline) taking longer than the limit
# (STRATA_METIS_SLEEP_MS) is a healthy run with the same losses (run_alone's heartbeat), and a
# rank 0 frozen there (SIGSTOP) ends the job within the limit, rank 1 naming it.
# Usage: check_comm_timeout.sh MPIEXEC STRATA_TESTING DATA_DIR
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
source "$(dirname "$0")/checks.sh"
cd "$tmp" || exit 1
limit=3

stalled() {  # stalled WHAT [train flags...]: rank 1 stalls at epoch 3
  local what=$1 start rc elapsed_ms
  shift
  start=$(date +%s%N)
  STRATA_INJECT_STALL=1:3 timeout 120 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" \
    --epochs 30 --threads 1 --comm-timeout "$limit" "$@" >"$what.out" 2>"$what.err"
  rc=$?
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  echo "$what: mpirun exit $rc after ${elapsed_ms} ms"
  grep "no progress" "$what.err"
  if ! is_error "$rc"; then
    fail "$what: expected an error exit before the 120 s timeout, got $rc"
  elif ! grep -Eq "^strata: rank 0: no progress from rank 1 for $limit s in .* \(network failure\?\): aborting$" "$what.err"; then
    fail "$what: no line from rank 0 naming rank 1"
    cat "$what.err"
  elif [ "$elapsed_ms" -gt $(((limit + 12) * 1000)) ]; then
    fail "$what: took ${elapsed_ms} ms (limit ${limit} s + 12 s)"
  else
    ok "$what: rank 0 named rank 1 and the job ended in ${elapsed_ms} ms"
  fi
  once_last "$what" "no progress from rank" "$what.err"
}
stalled graph
stalled pipeline --parallel pipeline --model gcnii --layers 4 --chunks 4

# Loading: rank 0 works alone (METIS) for longer than the limit; the others wait, healthy.
losses() { grep -Eo "^epoch +[0-9]+ +loss [0-9.]+|^test_accuracy=.*" "$1"; }
lone() {  # lone WHAT [train flags...]: the same losses with METIS slowed past the limit
  local what=$1 rc
  shift
  timeout 120 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" --epochs 5 --threads 1 \
    --comm-timeout "$limit" "$@" >"$what-fast.out" 2>&1 || fail "$what: the run exited $?"
  STRATA_METIS_SLEEP_MS=$(((limit + 3) * 1000)) timeout 120 "$mpiexec" -n 2 "$strata" train \
    --data "$data/cora.h5" --epochs 5 --threads 1 --comm-timeout "$limit" "$@" \
    >"$what.out" 2>"$what.err"
  rc=$?
  if [ "$rc" -ne 0 ] || ! grep -q "strata-testing: METIS starts" "$what.out"; then
    fail "$what: METIS alone for $((limit + 3)) s on rank 0 (--comm-timeout $limit): exit $rc"
    cat "$what.err"
  elif [ -z "$(losses "$what.out")" ] || [ "$(losses "$what.out")" != "$(losses "$what-fast.out")" ]; then
    fail "$what: the losses differ from the run without the pause"
  else
    ok "$what: METIS alone for $((limit + 3)) s on rank 0 under --comm-timeout $limit: the same losses"
  fi
}
lone "lone metis" --partition-method metis
lone "lone chunk partition" --parallel pipeline --model gcnii --layers 4 --chunks 4

# Loading: rank 0 frozen (SIGSTOP) while it works alone: rank 1 hears no heartbeat and ends the
# job within the limit, naming rank 0.
STRATA_METIS_SLEEP_MS=60000 timeout 120 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" \
  --epochs 5 --threads 1 --comm-timeout "$limit" --partition-method metis \
  >frozen.out 2>frozen.err &
job=$!
waited=0
until grep -q "strata-testing: METIS starts" frozen.out 2>/dev/null || [ "$waited" -ge 600 ]; do
  sleep 0.1
  waited=$((waited + 1))
done
rank0=$(rank_pid "$job" 0)
if [ -z "$rank0" ]; then
  fail "frozen while loading: rank 0 not found (METIS never started?)"
  kill "$job"
else
  start=$(date +%s%N)
  kill -STOP "$rank0"
  wait "$job"
  rc=$?
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  kill -CONT "$rank0" 2>/dev/null
  echo "frozen while loading: mpirun exit $rc after ${elapsed_ms} ms"
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$elapsed_ms" -gt $(((limit + 12) * 1000)) ]; then
    fail "frozen while loading: exit $rc after ${elapsed_ms} ms (limit ${limit} s + 12 s)"
    cat frozen.err
  else
    ok "frozen while loading: the job ended ${elapsed_ms} ms after rank 0 froze"
  fi
  once_last "frozen while loading" \
    "^strata: rank 1: no progress from rank 0 for $limit s in the heartbeat of rank 0 working alone \(serial METIS of the whole graph\) \(network failure\?\): aborting$" \
    frozen.err
fi

# Checkpoints: the aborted run resumes and ends as an uninterrupted run.
train() {  # train DIR METRICS [args...]
  local dir=$1 metrics=$2
  shift 2
  timeout 120 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" --epochs 12 --threads 1 \
    --comm-timeout "$limit" --checkpoint-dir "$dir" --checkpoint-every 2 --metrics "$metrics" "$@"
}
train full full.jsonl >full.out 2>&1 || fail "uninterrupted run exited $?"
STRATA_INJECT_STALL=1:6 train part part.jsonl >part.out 2>&1
rc=$?
is_error "$rc" || fail "stalled run: expected an error exit before the 120 s timeout, got $rc"
train part part.jsonl --resume >resume.out 2>&1 || fail "resumed run exited $?"
if grep -q "resuming from part/ckpt-000004.h5 (epoch 4)" resume.out &&
  /usr/bin/python3 - full.jsonl part.jsonl <<'PY'; then
import json, sys
keep = ("epoch", "loss", "train_acc", "val_acc", "test_acc", "val_loss", "halo_bytes")
a, b = ([{k: json.loads(l)[k] for k in keep} for l in open(p)] for p in sys.argv[1:])
sys.exit(0 if a == b and len(a) == 12 else 1)
PY
  ok "after the abort, --resume continues from epoch 4 and ends as the uninterrupted run"
else
  fail "resume after the abort"
  cat part.out resume.out
fi
finish
