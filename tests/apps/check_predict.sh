#!/usr/bin/env bash
# `strata predict` after training on a 2-part partition directory of Cora serves the best
# weights, the model whose accuracy training reported: with the same K its test accuracy —
# computed by h5py from /predictions in the ORIGINAL vertex order against cora.h5's labels —
# equals the test accuracy of the best-validation epoch (training's test_accuracy= line), also
# when that is not the last epoch; on 1 rank with the .h5 the logits agree to float rounding;
# /embeddings has the hidden width; a checkpoint for another dataset is refused. The 2-rank
# output is a directory of parts, read with scripts/read_predictions.py.
# Usage: check_predict.sh MPIEXEC STRATA DATA_DIR
mpiexec=$1
strata=$(realpath "$2")
data=$(realpath "$3")
reader=$(realpath "$(dirname "$0")/../../scripts/read_predictions.py")
source "$(dirname "$0")/checks.sh"
cd "$tmp" || exit 1
run() { timeout 120 "$@"; }

run "$strata" partition --data "$data/cora.h5" --parts 2 --out cora.2 >/dev/null ||
  fail "partition exited $?"
run "$mpiexec" -n 2 "$strata" train --data cora.2 --epochs 60 --threads 1 --seed 1 \
  --row-normalize-features --checkpoint-dir ck --metrics m.jsonl --quiet >train.out 2>&1 ||
  fail "train exited $?"
run "$mpiexec" -n 2 "$strata" predict --data cora.2 --checkpoint ck --out p2 --embeddings \
  --threads 1 >p2.out 2>&1 || { fail "predict on 2 ranks exited $?"; cat p2.out; }
run "$strata" predict --data "$data/cora.h5" --checkpoint ck/ckpt-000060.h5 --out p1.h5 \
  --threads 1 >p1.out 2>&1 || { fail "predict on 1 rank (.h5) exited $?"; cat p1.out; }

/usr/bin/python3 - "$data/cora.h5" "$reader" <<'EOF' && ok "predictions match training's best epoch; 1 rank ≈ 2 ranks; shapes" || fail "predictions check"
import importlib.util, json, sys
import h5py
import numpy as np
spec = importlib.util.spec_from_file_location("read_predictions", sys.argv[2])
rp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rp)
graph = h5py.File(sys.argv[1], "r")
labels = graph["node/labels"][:]
test = graph["node/test_mask"][:].astype(bool).reshape(-1, labels.shape[0])[0]  # split 0
n = labels.shape[0]
records = [json.loads(line) for line in open("m.jsonl")]
best = records[0]
for r in records:  # the first epoch of highest val_acc (strata train's rule)
    if r["val_acc"] > best["val_acc"]:
        best = r
if best is records[-1]:
    errors_note = "the best epoch is the last one: this run does not tell best from last"
else:
    errors_note = ""
p2, p1 = rp.read_predictions("p2"), rp.read_predictions("p1.h5")
errors = []
if p2["predictions"].shape != (n,) or p2["predictions"].dtype != np.int64:
    errors.append(f"/predictions {p2['predictions'].shape} {p2['predictions'].dtype}")
if p2["logits"].shape != (n, 7) or p2["logits"].dtype != np.float32:
    errors.append(f"/logits {p2['logits'].shape}")
if p2["embeddings"].shape != (n, 16) or p2["embeddings"].dtype != np.float32:
    errors.append(f"/embeddings {p2['embeddings'].shape}")
if "embeddings" in p1:
    errors.append("/embeddings written without --embeddings")
pred = p2["predictions"][:]
if not np.array_equal(pred, np.argmax(p2["logits"][:], axis=1)):
    errors.append("/predictions is not the argmax of /logits")
acc = float(np.mean(pred[test] == labels[test]))
if acc != best["test_acc"]:
    errors.append(f"test accuracy {acc} from predictions != best epoch's {best['test_acc']}")
if errors_note:
    errors.append(errors_note)
if p2["attrs"]["best_epoch"] != best["epoch"]:
    errors.append(f"best_epoch attribute {p2['attrs']['best_epoch']} != {best['epoch']}")
if (p2["embeddings"][:] < 0).any():
    errors.append("embeddings (after ReLU) have negative entries")
diff = float(np.max(np.abs(p1["logits"][:] - p2["logits"][:])))
if diff > 1e-4:
    errors.append(f"1-rank and 2-rank logits differ by {diff}")
print(f"test accuracy {acc:.4f} (training's best epoch {best['epoch']}: {best['test_acc']:.4f}, "
      f"last epoch {records[-1]['test_acc']:.4f}); "
      f"max |logits(1 rank) - logits(2 ranks)| = {diff:.2e}")
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
EOF
line=$(grep test_accuracy= train.out) && grep -qF -- "$line" p2.out &&
  ok "predict prints training's test_accuracy" || { fail "printed accuracy"; cat p2.out train.out; }

# A checkpoint is refused for another dataset: the same widths, and other widths (whose
# parameters differ too: the dataset is still what is named).
must run "$strata" generate --nodes 300 --avg-degree 4 --features 1433 --classes 7 --out other.h5 >/dev/null
run "$strata" predict --data other.h5 --checkpoint ck --out bad.h5 >bad.out 2>&1
rc=$?
is_error "$rc" && grep -q "this checkpoint was trained on another dataset" bad.out && [ ! -e bad.h5 ] &&
  ok "another dataset is refused" || { fail "other dataset: exit $rc"; cat bad.out; }
must run "$strata" generate --nodes 300 --avg-degree 4 --features 50 --classes 3 --out narrow.h5 >/dev/null
run "$strata" predict --data narrow.h5 --checkpoint ck --out bad.h5 >bad.out 2>&1
rc=$?
is_error "$rc" && grep -q "this checkpoint was trained on another dataset" bad.out &&
  ! grep -q "different parameters" bad.out && [ ! -e bad.h5 ] &&
  ok "another dataset of other widths is named as another dataset" ||
  { fail "other widths: exit $rc"; cat bad.out; }
run "$strata" predict --data "$data/cora.h5" --checkpoint ck --out p1.h5 >exists.out 2>&1
rc=$?
is_error "$rc" && ok "an existing --out needs --force" ||
  { fail "an existing --out without --force: exit $rc"; cat exists.out; }

finish
