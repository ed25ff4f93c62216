#!/usr/bin/env bash
# An exception on one rank must end the whole mpirun job quickly, not hang — with graph
# parallelism, and in the layer pipeline (rank 1 is stage 1 there: stage 0 is blocked waiting
# for its gradients when it throws). So must a `kill -9` of rank 1 at a random moment of an
# epoch (after epoch 3): the job ends in under 10 s, mpirun naming the killed rank.
# A failed job prints its error once, as the last line of stderr, without Open MPI's banner
# (end_job): when only rank 1 fails, and when both ranks fail with the same error (a missing
# file; three times, the ranks race).
# Usage: check_injected_failure.sh MPIEXEC STRATA_TESTING DATA_DIR (the test build of strata:
# STRATA_INJECT_FAILURE makes rank 1 throw at epoch 3)
mpiexec=$1
strata=$2
data=$3
source "$(dirname "$0")/checks.sh"
err=$tmp/inject.err

# judge WHAT RC ELAPSED_MS PATTERN FILE WHY: a non-zero exit within 10 s, PATTERN in FILE
judge() {
  if [ "$2" -eq 0 ] || [ "$2" -eq 124 ]; then
    fail "$1: expected a non-zero exit before the timeout, got $2"
  elif [ "$3" -gt 10000 ]; then
    fail "$1: took $3 ms (limit 10 s)"
  elif ! grep -q "$4" "$5"; then
    fail "$1: $6"
    cat "$5"
  else
    ok "$1: exit $2 after $3 ms"
  fi
}
check() {  # check WHAT [train flags...]
  local what=$1
  shift
  local start rc elapsed_ms
  start=$(date +%s%N)
  STRATA_INJECT_FAILURE=1:3 timeout 60 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" \
    --epochs 50 --threads 1 "$@" >/dev/null 2>"$err"
  rc=$?
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  judge "$what" "$rc" "$elapsed_ms" "\[rank 1\] error: injected failure on rank 1 at epoch 3" \
    "$err" "no rank-tagged message"
  once_last "$what (rank 1 fails)" \
    "^\[rank 1\] error: injected failure on rank 1 at epoch 3 \(STRATA_INJECT_FAILURE\) \[" "$err"
}
check "graph parallelism"
check "layer pipeline" --parallel pipeline --model gcnii --layers 4 --chunks 4

# Both ranks fail (the same missing file): one of them reports.
for attempt in 1 2 3; do
  start=$(date +%s%N)
  timeout 60 "$mpiexec" -n 2 "$strata" train --data "$tmp/missing.h5" >/dev/null 2>"$err"
  rc=$?
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  judge "both ranks fail ($attempt)" "$rc" "$elapsed_ms" "missing.h5: no such file" "$err" \
    "no message naming the file"
  once_last "both ranks fail ($attempt)" \
    "^\[rank [01]\] error: $tmp/missing.h5: no such file or directory \[" "$err"
done

out=$tmp/kill9.out
check_kill() {  # check_kill WHAT [train flags...]
  local what=$1
  shift
  : >"$out"  # not the last call's output, which already has an epoch 3 line
  STRATA_EPOCH_SLEEP_MS=30 timeout 120 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" \
    --epochs 100000 --threads 1 "$@" >"$out" 2>&1 &
  local job=$! victim="" waited=0
  until grep -q "^epoch    3 " "$out" 2>/dev/null || [ "$waited" -ge 600 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  victim=$(rank_pid "$job" 1)
  if [ -z "$victim" ]; then
    fail "$what: rank 1 not found"
    kill "$job" || echo "  (kill $job: the job had already ended)"
    wait "$job"
    return
  fi
  sleep "0.0$((RANDOM % 10))"  # somewhere in an epoch
  local start rc elapsed_ms
  start=$(date +%s%N)
  if ! kill -9 "$victim"; then
    echo "FAIL: $what: kill -9 $victim failed (rank 1 had already ended)"
    failed=$((failed + 1))
    wait "$job"
    return
  fi
  wait "$job"
  rc=$?
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  echo "$what: kill -9 of rank 1 (pid $victim): mpirun exit $rc after ${elapsed_ms} ms"
  judge "$what" "$rc" "$elapsed_ms" \
    "process rank 1 with PID [0-9]* on node .* exited on signal 9 (Killed)" "$out" \
    "mpirun did not name the killed rank"
}
check_kill "kill -9, graph parallelism"
check_kill "kill -9, layer pipeline" --parallel pipeline --model gcnii --layers 4 --chunks 4
finish
