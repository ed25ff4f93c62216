#!/usr/bin/env bash
# What a new user hits following README's "Everyday use" block, on the real binary:
# - `strata plan --data g.h5` with a bare file name in the working directory plans (it failed
#   with "filesystem error: cannot make absolute path");
# - `strata calibrate` without --out writes where plan looks (~/.cache/strata/machine.json, here
#   under XDG_CACHE_HOME) and says plan uses it (with --out, its progress: check_calibrate.sh);
# - `strata plan` names the machine model it used, or says "uncalibrated", and warns when a
#   rank count puts more ranks x threads on a node than its cores;
# - help text: no default beside REQUIRED (generate, partition), no "{false}" (--bias), no "=0" for
#   calibrate's link figures, the model flags' ranges from the spec's table;
# - a partition directory's features are compressed as the graph file's (Cora's sizes printed;
#   reading them back is every partition test's).
# Usage: check_new_user.sh STRATA DATA_DIR
strata=$(realpath "$1")
data=$(realpath "$2")
source "$(dirname "$0")/checks.sh"
export XDG_CACHE_HOME=$tmp/xdg
unset STRATA_MACHINE

mkdir -p "$tmp/work"
cp "$data/cora.h5" "$tmp/work/g.h5"
cd "$tmp/work" || exit 1

# Plan with a bare file name, no calibration anywhere.
"$strata" plan --data g.h5 --ranks 1,2 >plan.out 2>plan.err &&
  ok "plan --data g.h5 (bare name) plans" || { cat plan.out plan.err; fail "plan --data g.h5"; }
grep -q "cannot make absolute path" plan.err && fail "filesystem error: $(cat plan.err)"
grep -qF "note: machine model: uncalibrated (built-in defaults; run strata calibrate)" plan.out &&
  ok "plan says it is uncalibrated" || fail "no uncalibrated note: $(cat plan.out)"

# Calibrate without --out: the default location, progress, and how plan finds it.
"$strata" calibrate --seconds 0.01 --no-fit >cal.out 2>cal.err &&
  ok "calibrate without --out" || { cat cal.out cal.err; fail "calibrate"; }
[ -s "$XDG_CACHE_HOME/strata/machine.json" ] && ok "written to \$XDG_CACHE_HOME/strata/machine.json" ||
  fail "no machine.json at the default location: $(cat cal.out)"
grep -qF "strata plan and strata train --plan auto use it by default" cal.out &&
  ok "calibrate says plan uses it by default" || fail "default use not said: $(cat cal.out)"
cp "$XDG_CACHE_HOME/strata/machine.json" m.json  # (calibrate --out: check_calibrate.sh)

# Plan names the model it used.
host=$(hostname)
"$strata" plan --data g.h5 --ranks 1 >plan2.out 2>&1 &&
  grep -qF "note: machine model: $XDG_CACHE_HOME/strata/machine.json (measured on $host)" plan2.out &&
  ok "plan names the default machine file" || fail "plan's machine note: $(cat plan2.out)"
STRATA_MACHINE=m.json "$strata" plan --data g.h5 --ranks 1 >plan3.out 2>&1 &&
  grep -qF "note: machine model: m.json (from STRATA_MACHINE, measured on $host)" plan3.out &&
  ok "plan names \$STRATA_MACHINE's file" || fail "plan's machine note: $(cat plan3.out)"

# Oversubscription: a machine model of 2 cores, K = 8 on one node.
/usr/bin/python3 - m.json two.json <<'PY' || fail "editing machine.json"
import json, sys
m = json.load(open(sys.argv[1]))
m["cores"] = 2
json.dump(m, open(sys.argv[2], "w"))
PY
"$strata" plan --data g.h5 --ranks 1,2,8 --machine two.json >plan4.out 2>plan4.err &&
  grep -qF "warning: K = 8: more ranks x threads on a node (8 x 1) than its 2 cores" plan4.err &&
  grep -qF "note: K = 8: more ranks x threads on a node" plan4.out &&
  ok "plan warns about 8 ranks on 2 cores" || fail "no oversubscription warning: $(cat plan4.err plan4.out)"
"$strata" plan --data g.h5 --ranks 8 --ranks-per-node 2 --machine two.json >plan5.out 2>plan5.err &&
  ! grep -q "warning" plan5.err && ok "2 ranks per node fit 2 cores: no warning" ||
  fail "spurious warning: $(cat plan5.err)"
grep -qF "note: across nodes: a node's link 1250.0 MB/s each way, latency 50 us, given by hand or the default, not measured" plan5.out &&
  ok "plan across nodes says the link is not measured" || fail "no inter-node note: $(grep note plan5.out)"

# Help text.
"$strata" generate --help >gen.help
grep -q "=1000" gen.help && fail "generate --help shows a default beside REQUIRED: $(grep nodes gen.help)"
grep -q -- "--nodes INT REQUIRED" gen.help && ok "generate --nodes: REQUIRED without a default" ||
  fail "generate --help: $(grep nodes gen.help)"
"$strata" partition --help | grep -q -- "--parts INT REQUIRED" && ok "partition --parts: REQUIRED without a default" ||
  fail "partition --help: $("$strata" partition --help | grep -- --parts)"
"$strata" train --help >train.help
grep -- "--bias" train.help | grep -q "{false}" && fail "train --help shows {false}: $(grep -- --bias train.help)"
grep -q -- "--no-bias" train.help && ok "train --help: --bias / --no-bias without {false}" ||
  fail "no --no-bias in train --help"
grep -q -- "--layers INT:\[1, 4096\]=recipe" train.help && grep -q -- "--dropout FLOAT:\[0, 1)=recipe" train.help &&
  ok "model flags show the spec's ranges" || fail "ranges: $(grep -E -- '--(layers|dropout) ' train.help)"
grep -q "features row-normalized" train.help && grep -q "features as stored" train.help &&
  ok "recipe lines say how features are normalized" || fail "recipes lack the features"
"$strata" calibrate --help >cal.help
grep -qE -- "--link-gbit [A-Z]+=0" cal.help && fail "calibrate --link-gbit shows =0: $(grep link-gbit cal.help)"
grep -q -- "--link-gbit" cal.help && ok "calibrate --link-gbit without =0" || fail "no --link-gbit"

# A partition directory: features compressed like the graph file's.
"$strata" partition --data g.h5 --parts 2 --out g.2 >/dev/null 2>&1 && ok "partition cora into 2" ||
  fail "partition"
/usr/bin/python3 - g.h5 g.2 <<'PY' && ok "part features compressed as the graph file's" || fail "part features"
import glob, os, sys
import h5py
graph, parts = sys.argv[1], sys.argv[2]
with h5py.File(graph) as g:
    want = g["node/features"].compression
for path in sorted(glob.glob(parts + "/part-*.h5")):
    with h5py.File(path) as f:
        d = f["node/features"]
        assert d.compression == want == "gzip" and d.shuffle, (path, d.compression, d.shuffle)
size = sum(os.path.getsize(p) for p in glob.glob(parts + "/*"))
print(f"sizes: {graph} {os.path.getsize(graph)} bytes, {parts}/ {size} bytes")
assert size < 4 * os.path.getsize(graph), size
PY
finish
