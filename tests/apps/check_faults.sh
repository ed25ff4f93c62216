#!/usr/bin/env bash
# Injected faults through the real binary (docs/durability.md), each checked by its message:
#  1. disk full while writing a partition directory, a checkpoint, the metrics file and a
#     predictions file: one error line naming the file, the previous output intact (byte for
#     byte), no temporary left behind. A small tmpfs when this user may mount one (root), else a
#     file-size limit (ulimit -f, SIGXFSZ ignored so that the write fails with EFBIG);
#     STRATA_FAULTS_MODE=ulimit forces the latter.
#  2. kill -9 at a random moment of a run that checkpoints every epoch (large checkpoints, so the
#     kill often lands in a write), three times: every checkpoint left is readable (`strata
#     predict` loads each) and --resume continues without skipping any.
#  3. a corrupted (bit-flipped) newest checkpoint: --resume says so in one line and falls back.
#  4. a NaN loss: an error naming the epoch and the newest checkpoint to resume from.
# Usage: check_faults.sh STRATA DATA_DIR
strata=$(realpath "$1")
data=$(realpath "$2")
source "$(dirname "$0")/checks.sh"
mnt=$tmp/mnt
must mkdir -p "$mnt"
mode=${STRATA_FAULTS_MODE:-tmpfs}
if [ "$mode" = tmpfs ] && ! mount -t tmpfs -o size=48m strata-faults "$mnt" 2>/dev/null; then
  mode=ulimit
fi
cleanup() {
  if [ "$mode" = tmpfs ]; then
    umount "$mnt" || echo "FAIL: umount $mnt exited $? (the tmpfs stays mounted)"
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1
echo "disk-full mode: $mode"

# full KB CMD...: runs CMD with about KB kilobytes left to write (tmpfs: the free space, filled
# with a placeholder; ulimit: the largest file). Output goes to full.out (through a pipe, which
# no file-size limit applies to); returns CMD's exit status.
full() {
  local kb=$1
  shift
  if [ "$mode" = tmpfs ]; then
    local avail
    avail=$(df -B1 --output=avail "$mnt" | tail -1)
    [ -n "$avail" ] || { fail "df $mnt: no free-space figure"; finish; exit 1; }
    must fallocate -l $((avail - kb * 1024)) "$mnt/.filler"
    "$@" 2>&1 | cat >full.out
    local rc=${PIPESTATUS[0]}
    must rm -f "$mnt/.filler"
    return "$rc"
  fi
  (
    trap '' XFSZ
    ulimit -f "$kb" || { echo "ulimit -f $kb failed"; exit 200; }  # 200: not an error exit
    # Open MPI's own files (PMIx's shared-memory store, the shared-memory transport) would hit
    # the limit first: a one-rank run needs neither.
    export PMIX_MCA_gds=hash OMPI_MCA_btl=self
    exec "$@"
  ) 2>&1 | cat >full.out
  return "${PIPESTATUS[0]}"
}
reason() {  # what the system says when the space runs out, in this mode
  [ "$mode" = tmpfs ] && echo "No space left on device" || echo "File too large"
}
# one_error PATTERN: full.out has exactly one error line, and it matches PATTERN.
one_error() {
  grep "error" full.out | sed 's/^/  /'
  [ "$(grep -c "error" full.out)" -eq 1 ] && grep "error" full.out | grep -q -- "$1"
}
# only NAMES...: the tmpfs directory holds exactly these entries (no temporary left behind).
only() {
  [ "$(cd "$mnt" && ls -A | grep -v '^\.filler$' | sort | tr '\n' ' ')" = "$*" ]
}

# --- 1a. a partition directory ---------------------------------------------------------------
"$strata" partition --data "$data/cora.h5" --parts 2 --out "$mnt/cora.2" >/dev/null 2>&1 ||
  fail "partition into the test directory"
must cp -r "$mnt/cora.2" before.2
full 200 "$strata" partition --data "$data/cora.h5" --parts 2 --seed 1 --out "$mnt/cora.2" --force
rc=$?
if is_error "$rc" && one_error "cora.2.tmp.[0-9]*/part-0000[01].h5: .*$(reason))" &&
  diff -r before.2 "$mnt/cora.2" >/dev/null && only "cora.2 "; then
  ok "disk full writing a partition: one error naming the part file, the old directory intact, no temporary"
else
  fail "disk full writing a partition: exit $rc"
  cat full.out
  ls -A "$mnt"
fi

# --- 1b. a checkpoint ----------------------------------------------------------------------
train() {  # train DIR EPOCHS [extra...]
  local dir=$1 epochs=$2
  shift 2
  "$strata" train --data "$data/cora.h5" --epochs "$epochs" --threads 1 --checkpoint-dir "$dir" \
    --checkpoint-every 2 "$@"
}
must rm -rf "${mnt:?}/cora.2"
train "$mnt/ck" 4 >/dev/null 2>&1 || fail "training into the test directory"
must cp -r "$mnt/ck" before.ck
full 100 "$strata" train --data "$data/cora.h5" --epochs 8 --threads 1 --checkpoint-dir "$mnt/ck" \
  --checkpoint-every 2 --resume
rc=$?
if is_error "$rc" && one_error "ckpt-000006.h5.tmp.[0-9]*: .*$(reason))" &&
  diff -r before.ck "$mnt/ck" >/dev/null && only "ck "; then
  ok "disk full writing a checkpoint: one error naming it, the previous ones intact, no temporary"
else
  fail "disk full writing a checkpoint: exit $rc"
  cat full.out
  ls -A "$mnt" "$mnt/ck"
fi
train "$mnt/ck" 8 --resume >resume.out 2>&1 && grep -q "resuming from $mnt/ck/ckpt-000004.h5 (epoch 4)" resume.out &&
  ! grep -q skipping resume.out && ok "with space again, --resume continues from the intact checkpoint" ||
  { fail "resume after the disk-full failure"; cat resume.out; }
must rm -rf "${mnt:?}/ck"

# --- 1c. the metrics file (an append-only log: whole records only) --------------------------
full 8 "$strata" train --data "$data/cora.h5" --epochs 200 --threads 1 --metrics "$mnt/m.jsonl"
rc=$?
epoch=$(sed -n 's/.*writing the metrics record of epoch \([0-9]*\) failed.*/\1/p' full.out)
if is_error "$rc" && one_error "m.jsonl: writing the metrics record of epoch [0-9]* failed: $(reason) (the file keeps the records before it)" &&
  [ -n "$epoch" ] && [ "$(wc -l <"$mnt/m.jsonl")" -eq $((epoch - 1)) ] &&
  [ -z "$(tail -c1 "$mnt/m.jsonl")" ] &&
  /usr/bin/python3 -c "import json,sys; [json.loads(l) for l in open(sys.argv[1])]" "$mnt/m.jsonl"; then
  ok "disk full appending metrics: one error naming the file and epoch $epoch, only whole records kept"
else
  fail "disk full appending metrics: exit $rc, epoch '$epoch'"
  cat full.out
  tail -c 300 "$mnt/m.jsonl"
fi
must rm -f "$mnt/m.jsonl"

# --- 1d. a predictions file ----------------------------------------------------------------
train ck 4 >/dev/null 2>&1 || fail "training for predict"
"$strata" predict --data "$data/cora.h5" --checkpoint ck --out "$mnt/pred.h5" >/dev/null 2>&1 ||
  fail "predict into the test directory"
must cp "$mnt/pred.h5" before.pred.h5
full 16 "$strata" predict --data "$data/cora.h5" --checkpoint ck --out "$mnt/pred.h5" --force --embeddings
rc=$?
if is_error "$rc" && one_error "pred.h5.tmp.[0-9]*: .*$(reason))" && cmp -s before.pred.h5 "$mnt/pred.h5" && only "pred.h5 "; then
  ok "disk full writing predictions: one error naming the file, the previous file intact, no temporary"
else
  fail "disk full writing predictions: exit $rc"
  cat full.out
  ls -A "$mnt"
fi

# --- 2. kill -9 during checkpoint writes ---------------------------------------------------
# 3000 vertices x 2000 features, hidden 512: 1.0 M parameters, 16 MB per checkpoint (weights,
# Adam's two moments, best weights), one every epoch.
"$strata" generate --nodes 3000 --avg-degree 10 --features 2000 --classes 8 --out mid.h5 \
  >/dev/null 2>&1 || fail "generate"
bad=0
for attempt in 1 2 3; do
  "$strata" train --data mid.h5 --epochs 100000 --threads 1 --hidden 512 --checkpoint-dir kill \
    --checkpoint-every 1 --resume >"kill$attempt.out" 2>&1 &
  pid=$!
  # Once this attempt has finished an epoch (and so written a checkpoint; a slow or loaded
  # machine, or a sanitizer build, takes longer to get there), kill at a random moment.
  waited=0
  until grep -q "^epoch" "kill$attempt.out" 2>/dev/null || [ "$waited" -ge 1200 ] ||
    ! kill -0 "$pid" 2>/dev/null; do
    sleep 0.1
    waited=$((waited + 1))
  done
  sleep "$(/usr/bin/python3 -c "import random; print(round(random.uniform(0.2, 2.0), 2))")"
  if ! kill -9 "$pid" 2>/dev/null; then  # it ended on its own before the kill: a failure
    wait "$pid"
    fail "kill -9 #$attempt: the run had already ended (exit $?)"
    cat "kill$attempt.out"
    bad=1
    continue
  fi
  wait "$pid" 2>/dev/null
  rc=$?
  [ "$rc" -eq 137 ] || { fail "kill -9 #$attempt: exit $rc, expected 137 (SIGKILL)"; bad=1; }
  files=$(ls kill/ckpt-*.h5 2>/dev/null)
  [ -n "$files" ] || { fail "kill -9 #$attempt: no checkpoint at all"; bad=1; continue; }
  for f in $files; do
    if ! "$strata" predict --data mid.h5 --checkpoint "$f" --out p.h5 --force >p.out 2>&1; then
      fail "kill -9 #$attempt: $f does not load"
      cat p.out
      bad=1
    fi
  done
  echo "kill -9 #$attempt: $(echo "$files" | wc -w) checkpoints, $(ls -A kill | grep -c tmp) temporaries left"
done
"$strata" train --data mid.h5 --epochs 1 --threads 1 --hidden 512 --checkpoint-dir kill \
  --resume >kill.out 2>&1
rc=$?
if [ "$bad" -eq 0 ] && [ "$rc" -eq 0 ] && grep -q "resuming from kill/ckpt-" kill.out && ! grep -q skipping kill.out &&
  [ "$(ls -A kill | grep -c tmp)" -eq 0 ]; then
  ok "kill -9 at random moments (3 times): every checkpoint loads, resume skips none, temporaries cleared"
else
  fail "kill -9: resume afterwards (exit $rc)"
  cat kill.out
fi

# --- 3. a corrupted newest checkpoint -------------------------------------------------------
train ck 8 --resume >/dev/null 2>&1 || fail "training to epoch 8"
must /usr/bin/python3 - ck/ckpt-000008.h5 <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    offset = f["/model/params"].id.get_offset()
with open(sys.argv[1], "r+b") as f:
    f.seek(offset + 40)
    byte = f.read(1)
    f.seek(offset + 40)
    f.write(bytes([byte[0] ^ 0x10]))
PY
train ck 10 --resume >corrupt.out 2>&1
rc=$?
if [ "$rc" -eq 0 ] &&
  [ "$(grep -c "warning: skipping unreadable checkpoint ckpt-000008.h5: ck/ckpt-000008.h5: /model/params: checksum mismatch" corrupt.out)" -eq 1 ] &&
  grep -q "resuming from ck/ckpt-000006.h5 (epoch 6)" corrupt.out; then
  ok "a bit-flipped newest checkpoint: one warning naming it, resumed from the previous one"
else
  fail "corrupted newest checkpoint: exit $rc"
  cat corrupt.out
fi

# --- 4. NaN in the loss ----------------------------------------------------------------------
must rm -rf nan
"$strata" train --data "$data/cora.h5" --epochs 8 --threads 1 --lr 1e30 --checkpoint-dir nan \
  --checkpoint-every 1 >nan.out 2>&1
rc=$?
if is_error "$rc" && [ "$(grep -c error nan.out)" -eq 1 ] &&
  grep -q "error: training diverged: loss is NaN at epoch 2 (try a smaller lr); the newest checkpoint, nan/ckpt-000001.h5 (epoch 1), holds the weights before it: resuming continues from there" nan.out &&
  [ "$(ls nan)" = ckpt-000001.h5 ]; then
  ok "a NaN loss: one error naming the epoch and the checkpoint to resume from; no NaN checkpoint"
else
  fail "NaN loss: exit $rc"
  cat nan.out
fi

finish
