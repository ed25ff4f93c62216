#!/usr/bin/env bash
# An exception on one rank must end the whole mpirun job quickly (MPI_Abort), not hang.
# Usage: check_injected_failure.sh MPIEXEC STRATA_TESTING DATA_DIR (the test build of strata:
# STRATA_INJECT_FAILURE makes rank 1 throw at epoch 3)
set -u
mpiexec=$1
strata=$2
data=$3
start=$(date +%s%N)
STRATA_INJECT_FAILURE=1:3 timeout 60 "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" \
  --epochs 50 --threads 1 >/dev/null 2>"${TMPDIR:-/tmp}/strata-inject.err"
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
echo "mpirun exit $rc after ${elapsed_ms} ms"
grep -m1 "rank 1" "${TMPDIR:-/tmp}/strata-inject.err"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
  echo "FAIL: expected a non-zero exit before the timeout"
  exit 1
fi
if [ "$elapsed_ms" -gt 10000 ]; then
  echo "FAIL: took ${elapsed_ms} ms (limit 10 s)"
  exit 1
fi
grep -q "\[rank 1\] error: injected failure on rank 1 at epoch 3" "${TMPDIR:-/tmp}/strata-inject.err" || {
  echo "FAIL: no rank-tagged message"
  cat "${TMPDIR:-/tmp}/strata-inject.err"
  exit 1
}
echo "1 passed, 0 failed"
