#!/usr/bin/env bash
# `strata predict` on K > 1 ranks writes a directory of per-rank parts and index.json
# (docs/checkpoints.md, "Predictions"): assembled by scripts/read_predictions.py, the predictions
# at K = 2 (the .h5, partitioned in memory) and K = 4 (a partition directory) equal K = 1's
# single file (probabilities within 1e-5 relative, argmax equal except ties); the index names
# every part with its rows; --force replaces a directory (not a file: --force replaces only the
# same kind); an existing one is refused without it;
# a rank that cannot write its part (a file-size limit on rank 1 only) fails the job with no
# directory and no temporary left; an incomplete directory (no index.json) is refused by the
# reader.
# Usage: check_predict_parts.sh MPIEXEC STRATA DATA_DIR SCRIPTS_DIR
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
reader=$(realpath "$4")/read_predictions.py
source "$(dirname "$0")/checks.sh"
cd "$tmp" || exit 1
run() { timeout 120 "$@"; }

run "$strata" train --data "$data/cora.h5" --epochs 30 --threads 1 --seed 3 \
  --checkpoint-dir ck --quiet >train.out 2>&1 || { fail "train exited $?"; cat train.out; }
run "$strata" partition --data "$data/cora.h5" --parts 4 --out cora.4 >/dev/null ||
  fail "partition exited $?"
run "$strata" predict --data "$data/cora.h5" --checkpoint ck --out p1.h5 --embeddings \
  --threads 1 >p1.out 2>&1 || { fail "predict on 1 rank exited $?"; cat p1.out; }
run "$mpiexec" -n 2 "$strata" predict --data "$data/cora.h5" --checkpoint ck --out p2 \
  --embeddings --threads 1 >p2.out 2>&1 || { fail "predict on 2 ranks exited $?"; cat p2.out; }
run "$mpiexec" -n 4 "$strata" predict --data cora.4 --checkpoint ck --out p4 --embeddings \
  --threads 1 >p4.out 2>&1 || { fail "predict on 4 ranks exited $?"; cat p4.out; }
[ -f p1.h5 ] && [ -d p2 ] && [ -d p4 ] && ok "1 rank writes a file, 2 and 4 ranks a directory" ||
  fail "output kinds: $(ls -A)"
[ "$(ls -A p4 | tr '\n' ' ')" = "index.json part-00000.h5 part-00001.h5 part-00002.h5 part-00003.h5 " ] &&
  ok "the directory holds index.json and one part per rank" || fail "p4 holds $(ls -A p4)"
grep -q "(4 parts and index.json)" p4.out && ok "predict names the parts" ||
  { fail "p4 output"; cat p4.out; }

/usr/bin/python3 - "$reader" cora.4/partition.json <<'EOF_PY' && ok "K = 2 and 4 assembled equal K = 1 (probabilities 1e-5 relative, argmax except ties)" || fail "assembled predictions differ"
import importlib.util, json, sys
import numpy as np
spec = importlib.util.spec_from_file_location("read_predictions", sys.argv[1])
rp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rp)
errors = []
def softmax(z):
    z = z.astype(np.float64) - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)
p1 = rp.read_predictions("p1.h5")
prob1 = softmax(p1["logits"])
top2 = np.sort(prob1, axis=1)[:, -2:]
tie = (top2[:, 1] - top2[:, 0]) <= 1e-5 * top2[:, 1]
for name in ("p2", "p4"):
    p = rp.read_predictions(name)
    prob = softmax(p["logits"])
    rel = np.max(np.abs(prob - prob1) / np.maximum(np.abs(prob1), 1e-30))
    if not np.allclose(prob, prob1, rtol=1e-5, atol=1e-7):
        errors.append(f"{name}: probabilities differ (max relative {rel:.2e})")
    bad = (p["predictions"] != p1["predictions"]) & ~tie
    if bad.any():
        errors.append(f"{name}: argmax differs at {int(bad.sum())} vertices (not ties)")
    if not np.array_equal(p["predictions"], np.argmax(p["logits"], axis=1)):
        errors.append(f"{name}: /predictions is not the argmax of /logits")
    if p["embeddings"].shape != p1["embeddings"].shape or \
            not np.allclose(p["embeddings"], p1["embeddings"], rtol=1e-4, atol=1e-5):
        errors.append(f"{name}: embeddings differ")
    if p["attrs"] != p1["attrs"]:
        errors.append(f"{name}: attributes {p['attrs']} != {p1['attrs']}")
    print(f"{name}: {len(p['parts'])} parts, max relative probability difference {rel:.2e}, "
          f"{int(tie.sum())} ties")
index = json.load(open("p4/index.json"))
owned = [part["num_owned"] for part in json.load(open(sys.argv[2]))["parts"]]
if [q["rows"] for q in index["parts"]] != owned or index["total_rows"] != 2708:
    errors.append(f"p4 index rows {index['parts']} != the partition's owned {owned}")
if index["columns"] != {"logits": 7, "embeddings": 16} or index["num_parts"] != 4:
    errors.append(f"p4 index {index}")
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
EOF_PY

# The reader's --out writes the one-rank format; an incomplete directory is refused.
/usr/bin/python3 "$reader" p4 --out joined.h5 >reader.out 2>&1 &&
  /usr/bin/python3 - <<'EOF_PY' && ok "read_predictions --out writes the one-rank format" || { fail "joined file"; cat reader.out; }
import sys, h5py, numpy as np
a, b = h5py.File("joined.h5", "r"), h5py.File("p1.h5", "r")
sys.exit(0 if set(a.keys()) == set(b.keys()) and a["logits"].shape == b["logits"].shape and
         a.attrs["strata_format"] == "predictions" else 1)
EOF_PY
must cp -r p2 broken
must rm broken/index.json
/usr/bin/python3 "$reader" broken >broken.out 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "broken/index.json: missing (not a complete predictions directory)" broken.out &&
  ok "a directory without index.json is refused" || { fail "broken: exit $rc"; cat broken.out; }

# An existing directory: refused without --force, replaced with it (nothing else left behind).
run "$mpiexec" -n 2 "$strata" predict --data "$data/cora.h5" --checkpoint ck --out p2 \
  --threads 1 >exists.out 2>&1
rc=$?
is_error "$rc" && grep -q "p2: output already exists" exists.out &&
  ok "an existing directory needs --force" || { fail "existing: exit $rc"; cat exists.out; }
run "$mpiexec" -n 2 "$strata" predict --data "$data/cora.h5" --checkpoint ck --out p2 --force \
  --threads 1 >force.out 2>&1 || { fail "--force exited $?"; cat force.out; }
[ "$(/usr/bin/python3 -c 'import json; print(json.load(open("p2/index.json"))["columns"])')" = "{'logits': 7}" ] &&
  [ -z "$(ls -A | grep '^\.')" ] && ok "--force replaces the directory, no temporary left" ||
  fail "--force: $(cat p2/index.json) $(ls -A)"

# --force replaces only the same kind: a file is not replaced by a directory (nor the reverse).
run "$mpiexec" -n 2 "$strata" predict --data "$data/cora.h5" --checkpoint ck --out p1.h5 --force \
  --threads 1 >kind.out 2>&1
rc=$?
is_error "$rc" && grep -q "p1.h5: exists and is a file, but K > 1 ranks write a directory" kind.out &&
  [ -f p1.h5 ] && ok "a file --out is not replaced by a directory" || { fail "kind: exit $rc"; cat kind.out; }
run "$strata" predict --data "$data/cora.h5" --checkpoint ck --out p2 --force --threads 1 \
  >kind1.out 2>&1
rc=$?
is_error "$rc" && grep -q "p2: exists and is a directory, but one rank writes a file" kind1.out &&
  [ -f p2/index.json ] && ok "a directory --out is not replaced by a file" ||
  { fail "kind (1 rank): exit $rc"; cat kind1.out; }

# Rank 1 cannot write its part (a 16 KiB file-size limit on that process only, SIGXFSZ
# ignored so that the write fails with EFBIG): the job fails, nothing at --out, no temporary.
cat >limited.sh <<'EOF_SH'
#!/usr/bin/env bash
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ]; then
  trap '' XFSZ
  ulimit -f 16
fi
exec "$@"
EOF_SH
must chmod +x limited.sh
must mkdir full
cd full || exit 1
OMPI_MCA_btl=self,tcp PMIX_MCA_gds=hash run "$mpiexec" -n 2 ../limited.sh "$strata" predict \
  --data "$data/cora.h5" --checkpoint ../ck --out pf --threads 1 >../full.out 2>&1
rc=$?
cd .. || exit 1
is_error "$rc" && grep -q "part-00001.h5" full.out && [ -z "$(ls -A full)" ] &&
  ok "a rank failing to write its part: the job fails, nothing left (exit $rc)" ||
  { fail "rank 1 write failure: exit $rc, left: $(ls -A full)"; cat full.out; }

finish
