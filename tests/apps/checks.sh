# Sourced by tests/apps/check_*.sh: `set -u`, a scratch directory $tmp removed on exit (a
# script with more to clean sets its own EXIT trap, removing $tmp too), and ok/fail/finish
# (tests/support/counters.sh).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/counters.sh"
