#!/usr/bin/env bash
# Shared helpers of the cluster tests (sourced): the fixture's cluster (scripts/cluster/up with
# the test prefix and subnet of tests/cluster/CMakeLists.txt), skips, pass/fail counters.
set -u
skip_code=77
source "$(dirname "${BASH_SOURCE[0]}")/../support/counters.sh"

# Skips (exit 77) where emulated hosts cannot exist: not root, or no working `ip netns`.
require_netns() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: the cluster tests need root (network namespaces)"
    exit "$skip_code"
  fi
  local probe=${STRATA_CLUSTER_PREFIX:-stn}skip$$
  if ! command -v ip >/dev/null || ! ip netns add "$probe" 2>/dev/null; then
    echo "SKIP: 'ip netns' does not work here"
    exit "$skip_code"
  fi
  ip netns del "$probe"
}

# The fixture's cluster: its environment (STRATA_CLUSTER_MPI_FLAGS, ...) exported.
use_cluster() {
  require_netns
  local env=${STRATA_CLUSTER_DIR:?}/env
  [ -f "$env" ] || { echo "FAIL: no $env (did the cluster_up fixture run?)"; exit 1; }
  # shellcheck source=/dev/null
  source "$env"
  source "$repo/scripts/env.sh"
  unset OMPI_MCA_rmaps_base_oversubscribe  # one slot per host: -np 2 means one rank per host
  # mpirun over the emulated hosts: "${cluster_mpirun[@]}" -np 2 ARGS...
  # shellcheck disable=SC2206
  cluster_mpirun=(mpirun $STRATA_CLUSTER_MPI_FLAGS)
}

# wait_until SECONDS COMMAND...: polls every 0.2 s; returns 1 on timeout.
wait_until() {
  local deadline=$(($(date +%s) + $1))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# same_losses A.jsonl B.jsonl [REL]: the same epochs with losses within REL (default 1e-5)
# relative and accuracies within one vertex of Cora's sets.
same_losses() {
  /usr/bin/python3 - "$1" "$2" "${3:-1e-5}" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
rel = float(sys.argv[3])
if len(a) != len(b) or not a:
    sys.exit(f"{len(a)} vs {len(b)} epochs")
worst = 0.0
for x, y in zip(a, b):
    r = abs(x["loss"] - y["loss"]) / abs(x["loss"])
    worst = max(worst, r)
    if r > rel:
        sys.exit(f"epoch {x['epoch']}: loss {x['loss']} vs {y['loss']} (relative {r:.2e})")
    for k, n in (("train_acc", 140), ("val_acc", 500), ("test_acc", 1000)):
        if k in x and abs(x[k] - y[k]) * n > 1 + 1e-9:
            sys.exit(f"epoch {x['epoch']}: {k} {x[k]} vs {y[k]}")
print(f"{len(a)} epochs, largest relative loss difference {worst:.2e}")
PY
}

# Same deterministic metrics, bit for bit (as printed).
same_metrics() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
keep = ("epoch", "loss", "train_acc", "val_acc", "test_acc", "val_loss", "halo_bytes",
        "allreduce_bytes")
a, b = ([{k: json.loads(l).get(k) for k in keep} for l in open(p)] for p in sys.argv[1:])
if a != b:
    diff = [i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y]
    sys.exit(f"metrics differ: {len(a)} vs {len(b)} lines, first differing epochs {diff[:5]}")
PY
}
