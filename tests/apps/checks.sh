# Sourced by tests/apps/check_*.sh: `set -u`, a scratch directory $tmp removed on exit (a
# script with more to clean sets its own EXIT trap, removing $tmp too), the counters that
# ok/fail keep, and finish: the totals, and the script's status (non-zero on a failure).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
