# Sourced by tests/apps/check_*.sh: `set -u`, a scratch directory $tmp removed on exit (a
# script with more to clean sets its own EXIT trap, removing $tmp too), ok/fail/finish
# (tests/support/counters.sh), rank_pid (a rank of a running job), once_last (a failed job's
# one error line), and the two exit-status helpers every command goes through:
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

# once_last WHAT PATTERN FILE: exactly one line of the job's stderr FILE matches PATTERN (an
# extended regular expression), it is the last line, and Open MPI added nothing (no MPI_ABORT
# banner, no ORTE_ERROR_LOG, no non-zero exit report): end_job's promise.
once_last() {
  local count last
  count=$(grep -Ec -- "$2" "$3")
  last=$(tail -n 1 "$3")
  if [ "$count" -ne 1 ]; then
    fail "$1: the error appears $count times in stderr (expected once)"
    cat "$3"
  elif ! grep -Eq -- "$2" <<<"$last"; then
    fail "$1: the error is not the last line of stderr (last: '$last')"
    cat "$3"
  elif grep -q -e "MPI_ABORT" -e "ORTE_ERROR_LOG" -e "exited with non-zero status" "$3"; then
    fail "$1: Open MPI's banner is in stderr"
    cat "$3"
  else
    ok "$1: the error once, as the last line of stderr: $last"
  fi
}

# rank_pid JOB RANK: the pid of rank RANK of the job started in the background as
# `timeout ... mpirun ...` (pid JOB): the ranks are mpirun's children, told apart by their
# environment; nothing when not found.
rank_pid() {
  local pid
  for pid in $(pgrep -P "$(pgrep -P "$1" | head -1)"); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
      echo "$pid"
    fi
  done
}
