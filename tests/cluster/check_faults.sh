#!/usr/bin/env bash
# Network faults on the fixture's 2 hosts, mid-training (Cora, 2 ranks, one per host):
#  link_down   host 2's link taken down            (the cluster's mpirun flags)
#  slow_link   host 2's link slowed to a crawl     (tbf at 8 kbit/s; the same flags)
#  slow_link_watchdog, link_down_watchdog  the crawl and the cut with mpirun's daemon keepalive
#              off: strata's --comm-timeout alone must end the ranks (after a cut, mpirun itself
#              ends only once the link is repaired, which this test does when the ranks are gone)
#  load_link_down, load_link_down_watchdog  the cut while the ranks load (rank 0 in serial
#              METIS, slowed by STRATA_METIS_SLEEP_MS, rank 1 waiting for it), with and
#              without the keepalive: the heartbeat of run_alone must end the ranks
# Each time the job ends on its own, with a line naming the rank (strata: "rank R: no progress
# from rank P ...") or the host (Open MPI: "lost communication with a remote daemon ... on node
# HOST"), within --comm-timeout plus an allowance; no rank is left on either host; after the
# repair, --resume continues from the last checkpoint and ends exactly as an uninterrupted run
# (mid-training faults).
# Usage: check_faults.sh REPO STRATA_TESTING (the test build: STRATA_EPOCH_SLEEP_MS)
set -u
repo=$1
strata=$(realpath "$2")
source "$repo/tests/cluster/common.sh"
use_cluster
scripts=$repo/scripts/cluster
IFS=, read -r h1 h2 <<<"$STRATA_CLUSTER_HOSTS"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; "$scripts/link" "$h2" up >/dev/null 2>&1; "$scripts/shape" off >/dev/null 2>&1' EXIT
cd "$tmp" || exit 1
limit=${STRATA_TEST_COMM_TIMEOUT:-6}  # ranks gone within 5.3-9.2 s at 6 (CI, 2 cores); bound limit + 10
epochs=40
mpi_flags=("${cluster_mpirun[@]:1}")
no_keepalive=("${mpi_flags[@]}")
for i in "${!no_keepalive[@]}"; do
  [ "${no_keepalive[$i]}" = oob_tcp_keepalive_time ] && no_keepalive[$((i + 1))]=0
done

# Where the launcher's keepalive is on (mpi_flags: 3 s idle + 3 probes 1 s apart), it must notice
# the dead host before strata's watchdog (--comm-timeout) aborts: once a rank aborted first (seen
# once in CI under load, both at 6 s), mpirun still ran 16 s after the cut, most likely because
# its kill orders waited unacknowledged on the dead link and TCP sends no keepalive probe on a
# connection with data in flight. There strata's bound is 4 s longer; without the keepalive, $limit.
comm_timeout() {  # comm_timeout FLAGS_NAME
  if [ "$1" = mpi_flags ]; then echo $((limit + 4)); else echo "$limit"; fi
}
train() {  # train DIR METRICS [args...] (mpirun flags from $flags_name)
  local dir=$1 metrics=$2
  shift 2
  local -n flags=$flags_name
  mpirun -np 2 "${flags[@]}" "$strata" train --data "$repo/data/cora.h5" --epochs "$epochs" \
    --threads 1 --seed 1 --comm-timeout "$(comm_timeout "$flags_name")" --checkpoint-dir "$dir" \
    --checkpoint-every 5 --metrics "$metrics" "$@"
}
ranks_left() {  # strata processes still running inside the hosts
  for h in "$h1" "$h2"; do ip netns pids "$h" 2>/dev/null; done |
    while read -r p; do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = strata-testing ] && echo "$p"; done |
    paste -sd' '
}
named() {  # named ERRFILE MODE: the failure line (strata's for MODE strata, else either)
  local strata_line="^strata: rank [01]: no progress from rank [01] for [0-9]+ s in .* \(network failure\?\): aborting$"
  grep -Eq "$strata_line" "$1" && return 0
  [ "$2" = strata ] && return 1
  grep -q "ORTE has lost communication with a remote daemon" "$1" &&
    grep -Eq "Remote daemon: .* on node $h2$" "$1"
}

flags_name=mpi_flags
train reference reference.jsonl >reference.out 2>&1 ||
  { fail "uninterrupted run"; cat reference.out; }

# watch NAME MODE RANKS_BOUND JOB_BOUND BREAK REPAIR EARLY: breaks the link of the running
# job $job, then judges how the job ended (sets $repaired when it repaired already)
# (EARLY non-empty: repair as soon as no rank is left, before the job has ended)
watch() {
  local name=$1 mode=$2 ranks_bound=$3 job_bound=$4 break_cmd=$5 repair_cmd=$6 early=$7
  local start ranks_ms="" elapsed_ms="" rc=124 left now_ms
  start=$(date +%s%N)
  eval "$break_cmd"
  # Until the job has ended and its ranks are gone, or the ranks' bound has passed since the job
  # ended first (mpirun may end before the far host's daemon has killed its rank).
  while [ $((($(date +%s%N) - start) / 1000000000)) -lt "$job_bound" ]; do
    now_ms=$((($(date +%s%N) - start) / 1000000))
    [ -z "$ranks_ms" ] && [ -z "$(ranks_left)" ] && ranks_ms=$now_ms
    if [ -n "$early" ] && [ -n "$ranks_ms" ] && [ -z "$repaired" ]; then
      eval "$repair_cmd"
      repaired=1
    fi
    if [ -z "$elapsed_ms" ] && ! kill -0 "$job" 2>/dev/null; then
      elapsed_ms=$now_ms
    fi
    if [ -n "$elapsed_ms" ] && { [ -n "$ranks_ms" ] || [ "$now_ms" -gt $((ranks_bound * 1000)) ]; }; then
      break
    fi
    sleep 0.2
  done
  [ -n "$elapsed_ms" ] || elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  if ! kill -0 "$job" 2>/dev/null; then
    wait "$job"
    rc=$?
  fi
  left=$(ranks_left)
  echo "$name: ranks gone after ${ranks_ms:-never} ms, mpirun exit $rc after ${elapsed_ms} ms"
  grep -h -e "no progress" -e "lost communication" -e "Remote daemon" "$name.err"
  if [ "$rc" = 124 ]; then
    fail "$name: the job still runs ${job_bound} s after the fault"
    kill -9 $(pgrep -P "$job") "$job" 2>/dev/null
  elif [ "$rc" -eq 0 ]; then
    fail "$name: the job ended with exit 0"
  elif ! named "$name.err" "$mode"; then
    fail "$name: no line naming the rank or host (mode $mode)"
    tail -n 20 "$name.err"
  else
    ok "$name: the job ended ${elapsed_ms} ms after the fault (bound ${job_bound} s), naming who failed"
  fi
  [ -n "$ranks_ms" ] && [ "$ranks_ms" -le $((ranks_bound * 1000)) ] && [ -z "$left" ] &&
    ok "$name: no rank left on either host after ${ranks_ms} ms (bound ${ranks_bound} s)" ||
    fail "$name: ranks gone after ${ranks_ms:-never} ms (bound ${ranks_bound} s), left: ${left:-none}"
}

# fault NAME FLAGS_ARRAY MODE RANKS_BOUND JOB_BOUND BREAK REPAIR [early]: mid-training (after
# epoch 12), then --resume after the repair
fault() {
  local name=$1 repaired=""
  flags_name=$2
  STRATA_EPOCH_SLEEP_MS=200 train "$name" "$name.jsonl" >"$name.out" 2>"$name.err" &
  job=$!
  reached() { [ "$(wc -l 2>/dev/null <"$name.jsonl" || echo 0)" -ge 12 ]; }
  if ! wait_until 120 reached; then
    fail "$name: the run never reached epoch 12"
    tail -n 5 "$name.out" "$name.err"
  fi
  watch "$name" "$3" "$4" "$5" "$6" "$7" "${8:-}"
  local repair_cmd=$7
  [ -n "$repaired" ] || eval "$repair_cmd"
  flags_name=mpi_flags
  train "$name" "$name.jsonl" --resume >"$name-resume.out" 2>&1 ||
    { fail "$name: resume exited $?"; tail -n 20 "$name-resume.out"; }
  local from message
  from=$(grep -o "resuming from [^ ]* (epoch [0-9]*)" "$name-resume.out")
  if [ -n "$from" ] && message=$(same_metrics reference.jsonl "$name.jsonl"); then
    ok "$name: after the repair, $from ends as the uninterrupted run"
  else
    fail "$name: resume: '${from:-no resume line}' ${message:-}"
  fi
}
# load_fault NAME FLAGS_ARRAY MODE RANKS_BOUND JOB_BOUND BREAK REPAIR [early]: while the ranks
# load: rank 0 partitions alone (serial METIS, held 10 minutes by STRATA_METIS_SLEEP_MS) and
# rank 1 waits for it; mode strata: the heartbeat (run_alone) ends the ranks, rank 0's line
# names rank 1
load_fault() {
  local name=$1 repaired=""
  local -n load_flags=$2
  STRATA_METIS_SLEEP_MS=600000 mpirun -np 2 "${load_flags[@]}" "$strata" train \
    --data "$repo/data/cora.h5" --epochs 5 --threads 1 --comm-timeout "$(comm_timeout "$2")" \
    --partition-method metis >"$name.out" 2>"$name.err" &
  job=$!
  loading() { grep -q "strata-testing: METIS starts" "$name.out" 2>/dev/null; }
  if ! wait_until 120 loading; then
    fail "$name: METIS never started on rank 0"
    tail -n 5 "$name.out" "$name.err"
  fi
  sleep 1  # rank 1 in the heartbeat
  watch "$name" "$3" "$4" "$5" "$6" "$7" "${8:-}"
  local repair_cmd=$7
  [ -n "$repaired" ] || eval "$repair_cmd"
  if [ "$3" = strata ]; then
    grep -Eq "^strata: rank 0: no progress from rank 1 for $limit s in the heartbeat of rank 0 working alone \(serial METIS of the whole graph\) \(network failure\?\): aborting$" "$name.err" &&
      ok "$name: rank 0 named rank 1 while it partitioned alone" ||
      { fail "$name: no heartbeat line from rank 0 naming rank 1"; cat "$name.err"; }
  fi
}

bound=$((limit + 10))
fault link_down mpi_flags any "$bound" "$bound" "'$scripts/link' $h2 down" "'$scripts/link' $h2 up"
fault slow_link mpi_flags any "$bound" "$bound" "'$scripts/shape' 8kbit $h2" "'$scripts/shape' off"
# Without the launcher's keepalive the ranks still end (strata's watchdog); mpirun then needs
# its kill messages to cross the 8 kbit/s link (about a minute).
fault slow_link_watchdog no_keepalive strata "$bound" $((limit + 150)) \
  "'$scripts/shape' 8kbit $h2" "'$scripts/shape' off"
fault link_down_watchdog no_keepalive strata "$bound" $((limit + 60)) \
  "'$scripts/link' $h2 down" "'$scripts/link' $h2 up" early
# While loading: the launcher's keepalive, then strata's own bound alone.
load_fault load_link_down mpi_flags any "$bound" "$bound" \
  "'$scripts/link' $h2 down" "'$scripts/link' $h2 up"
load_fault load_link_down_watchdog no_keepalive strata "$bound" $((limit + 60)) \
  "'$scripts/link' $h2 down" "'$scripts/link' $h2 up" early
finish
