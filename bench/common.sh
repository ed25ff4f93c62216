# Shared by the bench scripts: release build, a generated graph cached under out/bench/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/env.sh"
strata=$root/build/release/apps/strata
py=/usr/bin/python3
outdir=$root/out/bench
mkdir -p "$outdir"

build_release() {
  cmake --preset release -S "$root" >/dev/null
  cmake --build "$root/build/release" -j "$(nproc)" --target strata "$@" >/dev/null
}

# generated_graph NAME NODES AVG_DEGREE FEATURES CLASSES → prints the .h5 path (cached)
generated_graph() {
  local path=$outdir/$1.h5
  if [ ! -f "$path" ]; then
    "$strata" generate --nodes "$2" --avg-degree "$3" --features "$4" --classes "$5" \
      --seed 1 --out "$path" >&2
  fi
  echo "$path"
}

# shuffled_graph NAME NODES DEGREE FEATURES CLASSES → the same graph as generated_graph's with
# its vertices randomly relabelled (generate --shuffle), generated once
shuffled_graph() {
  local path=$outdir/$1.h5
  if [ ! -f "$path" ]; then
    "$strata" generate --nodes "$2" --avg-degree "$3" --features "$4" --classes "$5" \
      --seed 1 --shuffle --out "$path" >&2
  fi
  echo "$path"
}

# median_epoch FILE.jsonl KEY → median of KEY over epochs ≥ 2 (epoch 1 warms up)
median_of() {
  "$py" - "$1" "$2" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
vals = [r[sys.argv[2]] for r in rows if r["epoch"] >= 2] or [r[sys.argv[2]] for r in rows]
print(statistics.median(vals))
PY
}
