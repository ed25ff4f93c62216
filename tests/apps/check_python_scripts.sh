#!/usr/bin/env bash
# scripts/plot_metrics and scripts/read_predictions.py under a python3 that lacks their modules
# (a virtual environment without the system's packages, as pyenv or conda put first on PATH):
# each re-runs itself under /usr/bin/python3, or says in one line what is missing; argparse
# help for read_predictions.py; the plot's title (model, best epoch by the run's criterion,
# its test accuracy) from the metrics' config, and without one.
# Usage: check_python_scripts.sh SCRIPTS_DIR
scripts=$(realpath "$1")
source "$(dirname "$0")/checks.sh"
system=/usr/bin/python3
cd "$tmp" || exit 1

"$system" -m venv --without-pip bare >/dev/null 2>&1 || { echo "no venv module: skipped"; exit 77; }
bare=$tmp/bare/bin/python3
"$bare" -c "import h5py" 2>/dev/null && { echo "the venv sees h5py: skipped"; exit 77; }

# read_predictions.py: --help from argparse (it opened "--help" as a file), under any python3.
"$bare" "$scripts/read_predictions.py" --help >help.out 2>&1 &&
  grep -q "usage: read_predictions.py \[-h\] \[--out FILE.h5\] PATH" help.out &&
  ok "read_predictions.py --help (argparse, re-run under $system)" || fail "--help: $(cat help.out)"
"$bare" "$scripts/read_predictions.py" >usage.out 2>&1
[ $? -eq 2 ] && grep -q "the following arguments are required: PATH" usage.out &&
  ok "read_predictions.py without PATH: usage, exit 2" || fail "no usage: $(cat usage.out)"
"$system" - <<'PY' || fail "writing a predictions file"
import h5py, numpy as np
with h5py.File("p.h5", "w") as f:
    f.attrs["strata_format"] = "predictions"
    f["predictions"] = np.array([1, 0, 1], dtype=np.int64)
    f["logits"] = np.zeros((3, 2), dtype=np.float32)
PY
"$bare" "$scripts/read_predictions.py" p.h5 >read.out 2>&1 &&
  grep -q "p.h5: 3 vertices, 2 classes, 1 part(s)" read.out &&
  ok "read_predictions.py reads under a python3 without h5py" || fail "read: $(cat read.out)"
STRATA_PYTHON=$bare "$bare" "$scripts/read_predictions.py" p.h5 >none.out 2>&1
rc=$?
[ $rc -eq 1 ] && [ "$(grep -c . none.out)" -eq 1 ] &&
  grep -q "read_predictions.py: needs the Python modules h5py, numpy, which .* lack: install them" none.out &&
  ok "no python3 with h5py: one line, exit 1" || fail "exit $rc: $(cat none.out)"

# plot_metrics: a run with a config (select by val_loss), under the bare python3.
cat >run.jsonl <<'EOF'
{"schema_version": 6, "epoch": 1, "loss": 1.9, "epoch_s": 0.01, "val_loss": 1.5, "val_acc": 0.50, "test_acc": 0.51, "config": {"model": "gcnii", "select_by": "val_loss"}}
{"schema_version": 6, "epoch": 2, "loss": 1.7, "epoch_s": 0.01, "val_loss": 1.2, "val_acc": 0.60, "test_acc": 0.62}
{"schema_version": 6, "epoch": 3, "loss": 1.5, "epoch_s": 0.01, "val_loss": 1.2, "val_acc": 0.70, "test_acc": 0.71}
{"schema_version": 6, "epoch": 4, "loss": 1.4, "epoch_s": 0.01}
EOF
"$bare" "$scripts/plot_metrics" run.jsonl run.png >plot.out 2>&1 && [ -s run.png ] &&
  ok "plot_metrics under a python3 without matplotlib" || fail "plot: $(cat plot.out)"
STRATA_PYTHON=$bare "$bare" "$scripts/plot_metrics" run.jsonl run2.png >none.out 2>&1
[ $? -eq 1 ] && grep -q "plot_metrics: needs the Python modules matplotlib" none.out &&
  ok "no python3 with matplotlib: one line, exit 1" || fail "$(cat none.out)"
"$system" - "$scripts/plot_metrics" <<'PY' && ok "the title: model, best epoch by the run's criterion, its test accuracy" || fail "title"
import importlib.machinery, importlib.util, json, sys
loader = importlib.machinery.SourceFileLoader("plot_metrics", sys.argv[1])
spec = importlib.util.spec_from_loader("plot_metrics", loader)
pm = importlib.util.module_from_spec(spec)
loader.exec_module(pm)
records = pm.read_records("run.jsonl")
# val_loss 1.2 at epochs 2 and 3: the first stays best (as the run chose it).
title = pm.title_of(records, "/some/run.jsonl")
assert title == "gcnii: best epoch 2 by val_loss, test acc 0.6200 (run.jsonl)", title
# A model spec object instead of a name; val_auc with a null (NaN) figure losing to any other.
records[0]["config"] = {"model": {"model": "gat", "heads": 8}, "select_by": "val_auc"}
records[0]["val_auc"], records[1]["val_auc"], records[2]["val_auc"] = None, 0.7, 0.9
assert pm.title_of(records, "r.jsonl") == "gat: best epoch 3 by val_auc, test acc 0.7100 (r.jsonl)", pm.title_of(records, "r.jsonl")
# No config (an older file): val_acc, said to be assumed.
for r in records:
    r.pop("config", None)
assert pm.title_of(records, "r.jsonl") == \
    "best epoch 3 by val_acc (assumed: no config in the file), test acc 0.7100 (r.jsonl)", pm.title_of(records, "r.jsonl")
# No evaluated epoch: the file name alone.
assert pm.title_of([{"epoch": 1, "loss": 1.0}], "x.jsonl") == "x.jsonl"
PY
finish
