#!/usr/bin/env bash
# Topology on 2 emulated hosts x 2 slots (scripts/cluster/up 2 --slots 2: shared memory inside a
# host, TCP between hosts), Cora, ranks mapped by slot and round robin (--map-by node): every rank
# sees 2 nodes; the 2x2 grid puts its feature groups inside the hosts (the layout line says so),
# so its inter-node bytes are exactly its halo and all-reduce bytes and its intra-node bytes its
# switches; 1D at 4 sends across exactly the halo rows partition.json lists between parts on
# different hosts (plus the all-reduces); the grid's inter-node bytes are below 1D's; both
# mappings train the same losses (1e-5); 2 ranks of one host run over shared memory alone (btl
# vader,self); strata calibrate measures the network inside a host and across hosts (every rank
# of one host with every rank of the other at once). Restores the fixture's 1 slot per host at the end.
# Usage: check_topology.sh REPO STRATA
set -u
repo=$1
strata=$(realpath "$2")
source "$repo/tests/cluster/common.sh"
use_cluster
tmp=$(mktemp -d)
restore() {
  "$repo/scripts/cluster/up" 2 >/dev/null 2>&1 || echo "FAIL: could not restore 1 slot per host"
  rm -rf "$tmp"
}
trap restore EXIT
"$repo/scripts/cluster/up" 2 --slots 2 >"$tmp/env" 2>"$tmp/up.err" ||
  { fail "up 2 --slots 2"; cat "$tmp/up.err"; finish; exit; }
source "$tmp/env"
cluster_mpirun=(mpirun $STRATA_CLUSTER_MPI_FLAGS)
cd "$tmp" || exit 1
flags=(--epochs 3 --threads 1 --seed 1)

for k in 2 4; do
  "$strata" partition --data "$repo/data/cora.h5" -k "$k" --out "$tmp/cora.$k" >"partition.$k.out" 2>&1 ||
    { fail "strata partition -k $k"; cat "partition.$k.out"; }
done
for map in slot node; do
  for layout in 1d grid; do
    if [ "$layout" = 1d ]; then args=(--data cora.4); else args=(--data cora.2 --feature-slices 2); fi
    timeout 300 "${cluster_mpirun[@]}" -np 4 --map-by "$map" "$strata" train "${args[@]}" "${flags[@]}" \
      --metrics "$map-$layout.jsonl" >"$map-$layout.out" 2>&1 ||
      { fail "$map, $layout: training"; cat "$map-$layout.out"; continue; }
    grep -E '^(layout|epoch +1 )' "$map-$layout.out"
  done
  if grep -q "feature groups inside nodes, graph groups across 2 nodes" "$map-grid.out"; then
    ok "$map: the grid's feature groups are inside the 2 hosts"
  else
    fail "$map: the layout line does not place the feature groups inside 2 nodes"
  fi
  if message=$(/usr/bin/python3 - "$map" "$tmp/cora.4/partition.json" <<'PY'
import json, sys
mapping, partition = sys.argv[1], sys.argv[2]
node = {"slot": [0, 0, 1, 1], "node": [0, 1, 0, 1]}[mapping]  # host of each rank
rows_all = rows_across = 0
for part in json.load(open(partition))["parts"]:
    for peer, rows in part["send"]:
        rows_all += rows
        rows_across += rows if node[part["part"]] != node[peer] else 0
oned = [json.loads(l) for l in open(f"{mapping}-1d.jsonl")]
grid = [json.loads(l) for l in open(f"{mapping}-grid.jsonl")]
lines = []
for a, b in zip(oned, grid):
    e = a["epoch"]
    total = lambda s: (s["halo_bytes"] + s["recompute_halo_bytes"] + s["a2a_bytes"] +
                       s["recompute_a2a_bytes"] + s["allreduce_bytes"])
    for s in (a, b):
        if s["bytes_intra_node"] + s["bytes_inter_node"] != total(s):
            sys.exit(f"epoch {e}: intra + inter = {s['bytes_intra_node'] + s['bytes_inter_node']}, the counts sum to {total(s)}")
    halo = a["halo_bytes"] + a["recompute_halo_bytes"]
    if (halo * rows_across) % rows_all:
        sys.exit(f"epoch {e}: 1D halo {halo} bytes is not a whole number of bytes per row ({rows_all} rows)")
    want = halo * rows_across // rows_all + a["allreduce_bytes"]
    if a["bytes_inter_node"] != want:
        sys.exit(f"epoch {e}: 1D inter-node {a['bytes_inter_node']}, expected {want} ({rows_across} of {rows_all} halo rows across)")
    want = b["halo_bytes"] + b["recompute_halo_bytes"] + b["allreduce_bytes"]
    if b["bytes_inter_node"] != want or b["bytes_intra_node"] != b["a2a_bytes"] + b["recompute_a2a_bytes"]:
        sys.exit(f"epoch {e}: grid inter {b['bytes_inter_node']} (expected {want}), intra {b['bytes_intra_node']} (expected {b['a2a_bytes']})")
    if not b["bytes_inter_node"] < a["bytes_inter_node"]:
        sys.exit(f"epoch {e}: grid inter-node {b['bytes_inter_node']} not below 1D's {a['bytes_inter_node']}")
    lines.append(f"{b['bytes_inter_node']} vs {a['bytes_inter_node']}")
print(f"{rows_across} of {rows_all} 1D halo rows across hosts; inter-node bytes grid vs 1D per epoch: " + ", ".join(lines))
PY
  ); then
    ok "$map: inside/across bytes = the formula; $message"
  else
    fail "$map: $message"
  fi
done
# Shared memory inside a host: 2 ranks of host 2 train with the vader BTL alone (no TCP).
shm_flags=${STRATA_CLUSTER_MPI_FLAGS/--mca btl tcp,vader,self/--mca btl vader,self}
# shellcheck disable=SC2086
if timeout 120 mpirun $shm_flags -np 2 --host "${STRATA_CLUSTER_HOSTS#*,}:2" "$strata" train \
  --data "$repo/data/cora.h5" --epochs 2 --threads 1 --quiet >shm.out 2>&1; then
  ok "2 ranks of one host over shared memory alone (btl vader,self)"
else
  fail "2 ranks of one host over shared memory alone"
  cat shm.out
fi
# strata calibrate across the hosts adds both networks to a machine model: one pair inside a host
# (shared memory), and across, both ranks of host 1 with both of host 2 at once (the link as a
# halo exchange's flows share it) and paired one to one (a grid's graph group), by slot and
# round robin alike; the version 3 file it starts from is read (its paired link = inter_node).
/usr/bin/python3 - machine.json <<'PY'
import json, sys
rates = {"threads": 1, "memory_gbs": 10.0, "step_s": 0.0,
         "gemm_gflops": [{"x": 16, "rate": 10.0}],
         "spmm_in_cache_g": [{"x": 16, "rate": 1.0}], "spmm_out_of_cache_g": [{"x": 16, "rate": 0.5}]}
json.dump({"format": "strata-machine", "version": 3, "host": "h", "cores": 2, "cache_bytes": 1e6,
           "by_threads": [rates], "shared_memory": {"latency_s": 5e-6, "bandwidth_gbs": 5.0},
           "inter_node": {"latency_s": 5e-5, "bandwidth_gbs": 1.25}, "mpi_measured": False,
           "inter_node_measured": False, "overlap_slowdown": 1.0, "baseline_rss_bytes": 0.0},
          open(sys.argv[1], "w"))
PY
for map in slot node; do
  if [ $map = slot ]; then inside="ranks 0-1" paired="0-2, 1-3"; else inside="ranks 0-2" paired="0-1, 2-3"; fi
  timeout 120 "${cluster_mpirun[@]}" -np 4 --map-by $map "$strata" calibrate --seconds 0.01 \
    --out machine.json >"calibrate-$map.out" 2>&1 &&
    grep -q "^calibrate: network inside a node ($inside): latency .* GB/s each way" "calibrate-$map.out" &&
    grep -q "^calibrate: network across nodes (2 x 2 ranks of nodes 0 and 1, every pair at once): latency .* GB/s each way" "calibrate-$map.out" &&
    grep -q "^calibrate: network across nodes, paired (ranks $paired, one partner each, at once): latency .* GB/s each way" "calibrate-$map.out" &&
    grep -q "network inside a node: measured; across nodes: measured" "calibrate-$map.out" &&
    /usr/bin/python3 -c "import json, sys; m = json.load(open(sys.argv[1])); assert m['version'] == 4 and m['mpi_measured'] and m['inter_node_measured'] and all(m[n]['bandwidth_gbs'] > 0 and m[n]['bandwidth_gbs'] != 1.25 and n + '.bandwidth_gbs' in m['network_spread'] for n in ('inter_node', 'inter_node_paired')), m" machine.json &&
    ok "$map: calibrate measures inside a host (one pair) and across hosts (every pair at once; paired): $(grep -o 'network across nodes.*GB/s' "calibrate-$map.out" | sed 's/ (.*: latency/: latency/' | paste -sd';')" ||
    { fail "$map: calibrate across the hosts"; cat "calibrate-$map.out"; }
done
"$strata" plan --data "$repo/data/cora.h5" --ranks 4 --ranks-per-node 2 --machine machine.json \
  --cache-dir "$tmp/plan" >plan.out 2>&1 &&
  grep -q "^note: across nodes: a node's link .* MB/s each way, latency .* us, measured by strata calibrate" plan.out &&
  ok "strata plan across the hosts says the link was measured" ||
  { fail "plan with the measured link"; cat plan.out; }
for layout in 1d grid; do
  if summary=$(same_losses "slot-$layout.jsonl" "node-$layout.jsonl" 1e-5); then
    ok "$layout: by slot = round robin: $summary"
  else
    fail "$layout: by slot vs round robin: $summary"
  fi
done
finish
