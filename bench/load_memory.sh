#!/usr/bin/env bash
# Peak RSS per rank of mpirun -np 2 strata train from a graph .h5 (per-rank loading) vs from a
# partition directory of the same method (docs/benchmarks.md). Env: STRATA (binary), OUT (scratch),
# METHODS (block random metis), EXTRA (model options, default --hidden 16), EPOCHS (2).
set -euo pipefail
cd "$(dirname "$0")/.." && source scripts/env.sh
S=${STRATA:-$PWD/build/release/apps/strata}
D=${OUT:-/tmp/strata-load-memory}; mkdir -p $D
[ -f $D/g.h5 ] || $S generate --nodes 200000 --avg-degree 25 --features 100 --classes 47 --seed 1 --shuffle --out $D/g.h5
for m in ${METHODS:-block random}; do
  [ -d $D/g.$m.2 ] || $S partition --data $D/g.h5 --parts 2 --method $m --out $D/g.$m.2 > /dev/null
done
train() {  # label, data, method, extra args
  local label=$1 data=$2 method=$3; shift 3
  echo "== $label  load: $(cut -d' ' -f1-3 /proc/loadavg)"
  mpirun -np 2 /usr/bin/time -f "maxrss_kib %M wall %e" $S train --data $data --partition-method $method \
      --epochs ${EPOCHS:-2} --seed 1 --quiet "$@" 2>&1 | grep -E "maxrss_kib|test_accuracy=" | sed 's/^/   /'
}
for m in ${METHODS:-block random}; do
  for extra in "${EXTRA:---hidden 16}"; do
    train "dir  $m $extra" $D/g.$m.2 $m $extra
    train "h5   $m $extra" $D/g.h5 $m $extra
  done
done
