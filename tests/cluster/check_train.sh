#!/usr/bin/env bash
# Multi-node exactness: `strata train` on Cora across the fixture's 2 emulated hosts (one rank
# per host, Open MPI's TCP transport over the veth links) gives the losses of one rank (within
# 1e-5 relative) and exactly those of 2 ranks on one host (shared memory), from the .h5 file and
# from a partition directory (`strata partition`). Usage: check_train.sh REPO STRATA
set -u
repo=$1
strata=$(realpath "$2")
source "$repo/tests/cluster/common.sh"
use_cluster
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
flags=(--epochs 20 --threads 1 --seed 1 --quiet)

"$strata" partition --data "$repo/data/cora.h5" -k 2 --out "$tmp/cora.2" >partition.out 2>&1 ||
  { fail "strata partition"; cat partition.out; }
timeout 300 mpirun -np 1 "$strata" train --data "$repo/data/cora.h5" "${flags[@]}" \
  --metrics one.jsonl >one.out 2>&1 || { fail "one rank"; cat one.out; }
for source in h5 dir; do
  data=$repo/data/cora.h5
  [ "$source" = dir ] && data=$tmp/cora.2
  timeout 300 mpirun -np 2 "$strata" train --data "$data" "${flags[@]}" --metrics "local-$source.jsonl" \
    >"local-$source.out" 2>&1 || { fail "2 ranks on one host ($source)"; cat "local-$source.out"; }
  start=$(date +%s%N)
  timeout 300 "${cluster_mpirun[@]}" -np 2 "$strata" train --data "$data" "${flags[@]}" \
    --metrics "cluster-$source.jsonl" >"cluster-$source.out" 2>&1 ||
    { fail "2 hosts ($source)"; cat "cluster-$source.out"; }
  echo "$source: 2 hosts took $((($(date +%s%N) - start) / 1000000)) ms"
  if summary=$(same_losses one.jsonl "cluster-$source.jsonl" 1e-5); then
    ok "$source: 2 hosts = 1 rank: $summary"
  else
    fail "$source: 2 hosts differ from 1 rank: $summary"
  fi
  if message=$(same_metrics "local-$source.jsonl" "cluster-$source.jsonl"); then
    ok "$source: 2 hosts over TCP = 2 ranks on one host, bit for bit"
  else
    fail "$source: 2 hosts vs 2 local ranks: $message"
  fi
done
finish
