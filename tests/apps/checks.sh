# Sourced by tests/apps/check_*.sh: `set -u`, a scratch directory $tmp removed on exit (a
# script with more to clean sets its own EXIT trap, removing $tmp too), ok/fail/finish
# (tests/support/counters.sh), and the two exit-status helpers every command goes through:
#   must CMD...   a step the later checks need (a copy, a directory, a setup run): a non-zero
#                 exit fails the script there, naming the command and its status;
#   is_error RC   RC is a program's error exit: non-zero, not timeout's 124, not a signal
#                 (>= 128), so that a crash or a hang never passes for a clean refusal.
set -u
tmp=$(mktemp -d) || { echo "FAIL: mktemp -d"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/counters.sh"
must() {
  "$@" && return 0
  local rc=$?
  fail "exit $rc: $*"
  finish
  exit 1
}
is_error() { [ "$1" -ne 0 ] && [ "$1" -ne 124 ] && [ "$1" -lt 128 ]; }
