#!/usr/bin/env bash
# `strata predict` rebuilds any model of the zoo from the spec its checkpoint stores: for a
# GCNII given by --model-spec and a GAT (attention: the halo exchange is rebuilt too), trained on
# 2 ranks, predict on 3 ranks prints the training run's best validation and test accuracy.
# Usage: check_predict_models.sh MPIEXEC STRATA DATA_DIR
set -uo pipefail
mpiexec=$1
strata=$2
data=$3
tmp=$(mktemp -d) || { echo "FAIL: mktemp -d"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
failures=0
# step WHAT OUT COMMAND...: runs COMMAND (stdout to OUT); a non-zero exit is counted as a
# failure, with its stderr.
step() {
  local what=$1 out=$2
  shift 2
  "$@" >"$out" 2>"$tmp/err" && return 0
  echo "FAIL: $what exited $?"
  cat "$tmp/err"
  failures=$((failures + 1))
  return 1
}
echo '{"model": "gcnii", "layers": 4, "hidden": 16, "alpha": 0.2}' >"$tmp/spec.json"
for model in spec gat; do
  if [ "$model" = spec ]; then args=(--model-spec "$tmp/spec.json"); else args=(--model gat); fi
  step "$model: train" "$tmp/train.out" "$mpiexec" -n 2 "$strata" train --data "$data/cora.h5" \
    "${args[@]}" --epochs 4 --quiet --checkpoint-dir "$tmp/ck-$model" || continue
  step "$model: predict" "$tmp/predict.out" "$mpiexec" -n 3 "$strata" predict \
    --data "$data/cora.h5" --checkpoint "$tmp/ck-$model" --out "$tmp/p-$model" || continue
  want=$(grep -o 'val_accuracy=[0-9.]*' "$tmp/train.out"; grep -o 'test_accuracy=[0-9.]*' "$tmp/train.out")
  got=$(grep -o 'val_accuracy=[0-9.]*' "$tmp/predict.out"; grep -o 'test_accuracy=[0-9.]*' "$tmp/predict.out")
  if [ "$want" = "$got" ] && [ -n "$want" ]; then
    echo "ok: $model: predict on 3 ranks gives training's $(echo $want)"
  else
    echo "FAIL: $model: training printed '$(echo $want)', predict '$(echo $got)'"
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ]
