#!/usr/bin/env bash
# Bad flags to `strata train`/`strata predict`/`strata partition`/`strata plan`: each must exit non-zero (not from a signal)
# with exactly one non-empty line on stderr, which names
# what was wrong (expect_message: the expected text; expect_error is its exit-code part). Usage: check_cli_errors.sh STRATA DATA_DIR
set -u
strata=$1
data=$2
tmp=$(mktemp -d) || { echo "FAIL: mktemp -d"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0
# setup CMD...: a step the checks after it need; a non-zero exit ends the script, naming it.
setup() {
  "$@" >"$tmp/setup.out" 2>&1 && return 0
  echo "FAIL: exit $?: $*"
  cat "$tmp/setup.out"
  exit 1
}
expect_error() {
  checks=$((checks + 1))
  local what=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines
  lines=$(grep -c . "$tmp/err")
  if [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ] || [ "$lines" -ne 1 ]; then
    echo "FAIL: $what: exit $rc, $lines stderr lines:"
    cat "$tmp/err"
    failures=$((failures + 1))
  else
    echo "ok: $what: $(cat "$tmp/err")"
  fi
}
# expect_message WHAT TEXT COMMAND...: expect_error, and the line must contain TEXT.
expect_message() {
  local what=$1 text=$2
  shift 2
  local before=$failures
  expect_error "$what" "$@"
  if [ "$failures" -eq "$before" ] && ! grep -qF -- "$text" "$tmp/err"; then
    echo "FAIL: $what: the message lacks '$text'"
    failures=$((failures + 1))
  fi
}
expect_message "unknown flag" "The following argument was not expected: --no-such-flag" "$strata" train --data "$data/cora.h5" --no-such-flag
expect_message "unknown subcommand" "unknown command 'frobnicate' (commands: info, convert, generate, partition, train, predict" "$strata" frobnicate
expect_message "no subcommand" "A subcommand is required" "$strata"
expect_message "missing --data" "--data is required" "$strata" train
expect_message "missing file" "$tmp/missing.h5: no such file or directory" "$strata" train --data "$tmp/missing.h5"
expect_message "zero epochs" "epochs = 0: must be at least 1 (--epochs)" "$strata" train --data "$data/cora.h5" --epochs 0
expect_message "negative hidden" "--hidden: must be at least 1, got -4" "$strata" train --data "$data/cora.h5" --hidden -4
expect_message "zero layers" "--layers: must be in [1, 4096], got 0" "$strata" train --data "$data/cora.h5" --layers 0
expect_message "negative lr" "lr = -1: must be a positive number (--lr)" "$strata" train --data "$data/cora.h5" --lr -1
expect_message "dropout 1.5" "--dropout: must be in [0, 1), got 1.5" "$strata" train --data "$data/cora.h5" --dropout 1.5
expect_message "not a number" "--epochs: 'ten' is not a number" "$strata" train --data "$data/cora.h5" --epochs ten
expect_message "unknown model" "--model: transformer not in {gcn,gcnii,gcnii*,resgcn+,appnp,sage,gin,gat,mlp}" "$strata" train --data "$data/cora.h5" --model transformer
expect_message "metrics dir missing" "$tmp/no/such/dir/m.jsonl: parent directory $tmp/no/such/dir does not exist" "$strata" train --data "$data/cora.h5" --epochs 1 \
  --metrics "$tmp/no/such/dir/m.jsonl"
# An existing metrics file: refused before loading, naming the option that replaces it, and the
# option's name works as a flag (--overwrite, as --force).
: >"$tmp/old.jsonl"
expect_message "metrics exists" "the file exists; set overwrite to replace it" "$strata" train --data "$data/cora.h5" --epochs 1 \
  --metrics "$tmp/old.jsonl"
checks=$((checks + 1))
if "$strata" train --data "$data/cora.h5" --epochs 1 --quiet --metrics "$tmp/old.jsonl" --overwrite >"$tmp/out" 2>&1 &&
  grep -q '"epoch":1' "$tmp/old.jsonl"; then
  echo "ok: --overwrite replaces an existing metrics file"
else
  echo "FAIL: --overwrite did not replace the metrics file:"
  cat "$tmp/out"
  failures=$((failures + 1))
fi
expect_message "unknown device" "device = 'gpu': expected cpu or cuda (--device)" "$strata" train --data "$data/cora.h5" --device gpu
expect_message "nccl on the cpu" "comm = 'nccl': needs device = cuda (--comm)" "$strata" train --data "$data/cora.h5" --comm nccl
expect_message "unknown recompute mode" "recompute = 'some': expected none, aggregation or all (--recompute)" "$strata" train --data "$data/cora.h5" --recompute some
expect_message "zero eval-every" "eval_every = 0: must be at least 1 (--eval-every)" "$strata" train --data "$data/cora.h5" --eval-every 0
expect_message "unknown select-by" "select_by = 'test_acc': expected val_acc, val_loss or val_auc (--select-by)" "$strata" train --data "$data/cora.h5" --select-by test_acc
# Models: an option the model does not read, spec files.
expect_message "option of another model" "--heads does not apply to --model gcnii (its options:" \
  "$strata" train --data "$data/cora.h5" --model gcnii --heads 4
echo '{"model": "gcnii", "layers": 4, "heads": 2}' >"$tmp/extra.json"
expect_message "spec key of another model" "extra.json: unknown key 'heads' for model gcnii" \
  "$strata" train --data "$data/cora.h5" --model-spec "$tmp/extra.json"
echo '{"model": "gcnii", "layers": ' >"$tmp/broken.json"
expect_message "spec not JSON" "broken.json: not valid JSON" \
  "$strata" train --data "$data/cora.h5" --model-spec "$tmp/broken.json"
echo '{"model": "transformer"}' >"$tmp/unknown.json"
expect_message "spec of an unknown model" "unknown.json: unknown model 'transformer' (known: gcn," \
  "$strata" train --data "$data/cora.h5" --model-spec "$tmp/unknown.json"
echo '{"model": "gat", "heads": 0}' >"$tmp/zero.json"
expect_message "spec value out of range" "zero.json: 'heads' must be at least 1, got 0" \
  "$strata" train --data "$data/cora.h5" --model-spec "$tmp/zero.json"
expect_message "spec and --model" "excludes" \
  "$strata" train --data "$data/cora.h5" --model-spec "$tmp/zero.json" --model gcn
expect_message "missing spec file" "$tmp/none.json" \
  "$strata" train --data "$data/cora.h5" --model-spec "$tmp/none.json"
# Test-only fault injection is not in the production program: neither as a flag nor from the
# environment (the run below trains normally).
expect_message "no fault-injection flag" "The following arguments were not expected: 0:1 --inject-failure" "$strata" train --data "$data/cora.h5" --inject-failure 0:1
checks=$((checks + 1))
if STRATA_INJECT_FAILURE=0:1 STRATA_INJECT_SIGNAL=0:1 "$strata" train --data "$data/cora.h5" \
  --epochs 2 --quiet >"$tmp/out" 2>"$tmp/err" && grep -q test_accuracy= "$tmp/out"; then
  echo "ok: STRATA_INJECT_* do nothing to the production program"
else
  echo "FAIL: the production program reacted to STRATA_INJECT_*"
  cat "$tmp/err"
  failures=$((failures + 1))
fi
# A partition directory of format version 1 (Â values, no degrees) is refused with the command
# that rebuilds it.
setup "$strata" partition --data "$data/cora.h5" --parts 1 --out "$tmp/cora.1"
setup sed -i 's/"strata_format_version": 4/"strata_format_version": 1/' "$tmp/cora.1/partition.json"
expect_error "partition format 1" "$strata" train --data "$tmp/cora.1" --epochs 1
checks=$((checks + 1))
expected="$tmp/cora.1/partition.json: partition format version 1 is not supported (this strata \
reads versions 2 to 4): re-partition with 'strata partition --data $data/cora.h5 --parts 1 --out \
$tmp/cora.1 --force'"
if grep -qF "$expected" "$tmp/err"; then
  echo "ok: the format-1 message names the file and the command"
else
  echo "FAIL: expected '$expected' in:"
  cat "$tmp/err"
  failures=$((failures + 1))
fi
# --parallel pipeline (one rank here: layouts that need more ranks say how many).
expect_message "--stages without the pipeline" "stages = 2: needs parallel = pipeline (--stages)" \
  "$strata" train --data "$data/cora.h5" --stages 2
expect_message "pipeline stages x ways vs ranks" \
  "stages = 2: stages x ways = 2 x 1 = 2 ranks, but the job has 1 (run it on 2 ranks) (--stages)" \
  "$strata" train --data "$data/cora.h5" --parallel pipeline --stages 2
expect_message "chunks not a multiple of ways" \
  "chunks = 3: every way needs the same number of chunks (a multiple of ways = 2) (--chunks)" \
  "$strata" train --data "$data/cora.h5" --parallel pipeline --ways 2 --chunks 3
expect_message "more chunks than vertices" "chunks = 5000: the graph has only 2708 vertices (--chunks)" \
  "$strata" train --data "$data/cora.h5" --parallel pipeline --chunks 5000
expect_message "attention in the pipeline" "is neither row-local nor an aggregation" \
  "$strata" train --data "$data/cora.h5" --parallel pipeline --model gat --epochs 1
setup "$strata" partition --data "$data/cora.h5" --parts 2 --out "$tmp/cora.2"
expect_message "pipeline on a partition directory without chunks" \
  "cora.2: no chunk map for the layer pipeline (parallel = pipeline): make one with 'strata partition --data \
$data/cora.h5 --parts 2 --chunks C --out DIR', or pass the graph .h5" \
  "$strata" train --data "$tmp/cora.2" --parallel pipeline --epochs 1
expect_message "partition --chunks not a multiple of parts" \
  "--chunks 3 with --parts 2: every part needs the same number of chunks (a multiple of 2)" \
  "$strata" partition --data "$data/cora.h5" --parts 2 --chunks 3 --out "$tmp/cora.2c"
setup "$strata" partition --data "$data/cora.h5" --parts 2 --chunks 4 --out "$tmp/cora.2c"
expect_message "pipeline --chunks against the partition's" \
  "chunks = 8: $tmp/cora.2c has 4 chunks (2 per part) (--chunks)" \
  "$strata" train --data "$tmp/cora.2c" --parallel pipeline --chunks 8 --epochs 1
# strata plan / calibrate / train --plan (planner/, docs/planner.md).
expect_message "plan: unknown model" "--model: transformer not in {gcn," \
  "$strata" plan --data "$data/cora.h5" --model transformer --ranks 1,2 --cache-dir "$tmp/plan"
expect_message "plan: empty rank list" "--ranks: empty rank list (give e.g. --ranks 1,2,4)" \
  "$strata" plan --data "$data/cora.h5" --ranks , --cache-dir "$tmp/plan"
expect_message "plan: bad rank count" "--ranks: '0' is not a rank count (a positive integer)" \
  "$strata" plan --data "$data/cora.h5" --ranks 1,0 --cache-dir "$tmp/plan"
expect_message "plan: impossible memory limit" "--memory-per-rank 0.0 MB: no candidate fits (the smallest needs" \
  "$strata" plan --data "$data/cora.h5" --ranks 1,2 --memory-per-rank 0.00001 --cache-dir "$tmp/plan"
expect_message "plan: zero memory" "--memory-per-rank: must be a positive number, got 0" \
  "$strata" plan --data "$data/cora.h5" --ranks 1 --memory-per-rank 0 --cache-dir "$tmp/plan"
expect_message "plan: zero threads" "--threads: must be a positive number, got 0" \
  "$strata" plan --data "$data/cora.h5" --ranks 1 --threads 0 --cache-dir "$tmp/plan"
checks=$((checks + 1))  # not an error: --threads reaches every candidate
if "$strata" plan --data "$data/cora.h5" --ranks 2 --threads 1 --ranks-per-node 1 --json \
  --cache-dir "$tmp/plan" >"$tmp/threads.json" 2>&1 &&
  /usr/bin/python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["candidates"]
assert c and all(x["threads"] == 1 for x in c), c' "$tmp/threads.json"; then
  echo "ok: plan --threads 1: every candidate at 1 thread"
else
  echo "FAIL: plan --threads 1: $(head -c 300 "$tmp/threads.json")"
  failures=$((failures + 1))
fi
expect_message "plan: missing machine model" "$tmp/none.json: cannot read the machine model" \
  "$strata" plan --data "$data/cora.h5" --ranks 1 --machine "$tmp/none.json" --cache-dir "$tmp/plan"
echo '{"format": "strata-machine", "version": 7}' >"$tmp/m7.json"
expect_message "plan: machine model version" "$tmp/m7.json: machine model version 7 is not supported" \
  "$strata" plan --data "$data/cora.h5" --ranks 1 --machine "$tmp/m7.json" --cache-dir "$tmp/plan"
expect_message "plan: cache beside the input" "--cache-dir $data: must not be beside or inside the input data" \
  "$strata" plan --data "$data/cora.h5" --ranks 1 --cache-dir "$data"
expect_message "train --plan with --recompute" "recompute = 'all': cannot be set with a plan (the plan chooses it) (--recompute)" \
  "$strata" train --data "$data/cora.h5" --plan auto --recompute all
echo '{"format": "strata-plan", "version": 1, "candidates": []}' >"$tmp/plan.json"
expect_message "train --plan without this rank count" "$tmp/plan.json: no recommended layout for 1 ranks" \
  "$strata" train --data "$data/cora.h5" --plan "$tmp/plan.json" --epochs 1
cat >"$tmp/plan2.json" <<'JSON'
{"format": "strata-plan", "version": 2, "candidates": [{"parallel": "pipeline", "ranks": 1,
 "recompute": "none", "stages": 2, "ways": 1, "chunks": 8, "recommended": true}]}
JSON
expect_message "train --plan: pipeline layout that does not fit the ranks" \
  "$tmp/plan2.json: pipeline candidate for 1 ranks: stages 2 x ways 1 with chunks 8 does not fit 1 ranks" \
  "$strata" train --data "$data/cora.h5" --plan "$tmp/plan2.json" --epochs 1
expect_message "train --plan with --stages" "stages = 2: cannot be set with a plan (the plan chooses it) (--stages)" \
  "$strata" train --data "$data/cora.h5" --plan auto --stages 2
expect_message "plan --compare with an unknown model" "--compare: 'dgl' is not a model it knows (plexus, cagnet)" \
  "$strata" plan --data "$data/cora.h5" --ranks 2 --compare plexus,dgl
expect_message "train --plan with --feature-slices" \
  "feature_slices = 2: cannot be set with a plan (the plan chooses it) (--feature-slices)" \
  "$strata" train --data "$data/cora.h5" --plan auto --feature-slices 2
expect_message "calibrate: zero seconds" "--seconds: must be a positive number, got 0" \
  "$strata" calibrate --seconds 0 --out "$tmp/m.json"
expect_message "calibrate: two rounds" "--rounds: must be in [3, 1000], got 2" \
  "$strata" calibrate --rounds 2 --out "$tmp/m.json"
if ! nvidia-smi -L >/dev/null 2>&1; then  # no GPU here: without CUDA support, or no device
  expect_message "cuda without a GPU" "CUDA" "$strata" train --data "$data/cora.h5" --device cuda
  expect_message "predict on cuda without a GPU" "CUDA" "$strata" predict --data "$data/cora.h5" \
    --checkpoint "$tmp/none.h5" --out "$tmp/p.h5" --device cuda
fi
echo "$((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
