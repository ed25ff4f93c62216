#!/usr/bin/env bash
# Runs its arguments where emulated hosts can exist; exits 77 (CTest's skip) where they cannot:
# not root, or no working `ip netns`. Usage: skip_unless_netns.sh COMMAND [ARGS...]
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$repo/tests/cluster/common.sh"
require_netns
exec "$@"
