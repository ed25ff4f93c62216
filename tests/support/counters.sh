# Sourced by the shell tests (tests/apps/checks.sh, tests/cluster/common.sh,
# tests/slurm/common.sh): the counters that ok/fail keep, and finish: the totals, and the
# script's status (non-zero on a failure).
passed=0
failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
