#!/usr/bin/env bash
# An exception on one rank must end the whole mpirun job quickly (MPI_Abort), not hang — with
# graph parallelism, and in the layer pipeline (rank 1 is stage 1 there: stage 0 is blocked
# waiting for its gradients when it throws).
# Usage: check_injected_failure.sh MPIEXEC STRATA_TESTING DATA_DIR (the test build of strata:
# STRATA_INJECT_FAILURE makes rank 1 throw at epoch 3)
set -u
mpiexec=$1
strata=$2
data=$3
err=${TMPDIR:-/tmp}/strata-inject.err
failed=0
check() {  # check WHAT [train flags...]
  local what=$1
  shift
  local start rc elapsed_ms
  start=$(date +%s%N)
  STRATA_INJECT_FAILURE=1:3 timeout 60 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" \
    --epochs 50 --threads 1 "$@" >/dev/null 2>"$err"
  rc=$?
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  echo "$what: mpirun exit $rc after ${elapsed_ms} ms"
  grep -m1 "rank 1" "$err"
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
    echo "FAIL: $what: expected a non-zero exit before the timeout"
    failed=$((failed + 1))
  elif [ "$elapsed_ms" -gt 10000 ]; then
    echo "FAIL: $what: took ${elapsed_ms} ms (limit 10 s)"
    failed=$((failed + 1))
  elif ! grep -q "\[rank 1\] error: injected failure on rank 1 at epoch 3" "$err"; then
    echo "FAIL: $what: no rank-tagged message"
    cat "$err"
    failed=$((failed + 1))
  fi
}
check "graph parallelism"
check "layer pipeline" --parallel pipeline --model gcnii --layers 4 --chunks 4
echo "$((2 - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
