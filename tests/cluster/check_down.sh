#!/usr/bin/env bash
# scripts/cluster/down leaves nothing behind: after a normal run, after `up` itself was killed
# (kill -9) half-way, and after a test was killed with a process still running inside a host;
# down twice is fine; a refused `up --latency-us` (no netem) leaves nothing. Uses its own
# prefix and subnet, apart from the fixture's cluster. Usage: check_down.sh REPO
set -u
repo=$1
source "$repo/tests/cluster/common.sh"
require_netns
export STRATA_CLUSTER_PREFIX=stk STRATA_CLUSTER_SUBNET=10.97.34 STRATA_CLUSTER_DIR=/tmp/strata-cluster-ctest-stk
scripts=$repo/scripts/cluster
trap '"$scripts/down" >/dev/null 2>&1' EXIT

leftovers() {  # everything of prefix stk that exists now, one line; empty when clean
  {
    ip netns list | awk '{print $1}' | grep -E '^stk' 
    ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^(vstk|br-stk)'
    grep -F "strata-cluster stk" /etc/hosts | sed 's/^/hosts: /'
    [ -d "$STRATA_CLUSTER_DIR" ] && echo "dir $STRATA_CLUSTER_DIR"
  } | paste -sd' '
}
[ -z "$(leftovers)" ] || "$scripts/down" >/dev/null 2>&1

# 1. A normal up/down, then down again.
"$scripts/up" 3 --rate 1 >/dev/null 2>&1 && [ -n "$(leftovers)" ] && ok "up 3 --rate 1" || fail "up 3 failed"
tc qdisc show dev vstk2 | grep -q "tbf.*rate 1Gbit" && ok "each link has a 1 Gbit/s tbf" ||
  fail "no tbf: $(tc qdisc show dev vstk2)"
"$scripts/down" && [ -z "$(leftovers)" ] && ok "down removes everything" || fail "left: $(leftovers)"
"$scripts/down" && ok "down twice: fine" || fail "second down failed"

# 2. A process left running inside a host by a killed test, then the test's shell killed.
bash -c "'$scripts/up' 2 >/dev/null 2>&1 && ip netns exec stk1 sleep 300 & wait" &
runner=$!
wait_until 30 sh -c "ip netns pids stk1 2>/dev/null | grep -q ." || fail "no process started in stk1"
orphan=$(ip netns pids stk1 | head -n1)
kill -9 "$runner"
"$scripts/down" 2>/dev/null
if [ -z "$(leftovers)" ] && ! kill -0 "$orphan" 2>/dev/null; then
  ok "after a killed test, down stops the process left in a host (pid $orphan) and removes everything"
else
  fail "after a killed test: left '$(leftovers)', process $orphan $(kill -0 "$orphan" 2>/dev/null && echo alive)"
fi

# 3. `up` itself killed half-way through building 8 hosts.
"$scripts/up" 8 >/dev/null 2>&1 &
builder=$!
wait_until 30 sh -c "ip netns list | grep -q '^stk3'"
kill -9 "$builder" 2>/dev/null
wait "$builder" 2>/dev/null
partial=$(leftovers)
"$scripts/down" 2>/dev/null
[ -n "$partial" ] && [ -z "$(leftovers)" ] && ok "up killed half-way: down removes the partial cluster" ||
  fail "up killed half-way: left '$(leftovers)' (partial: '${partial:-nothing}')"

# 4. --latency-us: netem where it exists; else a clear refusal that leaves nothing.
if out=$("$scripts/up" 2 --latency-us 100 2>&1); then
  tc qdisc show dev vstk1 | grep -q netem && ok "--latency-us: netem delay on each link" ||
    fail "--latency-us accepted without netem"
  "$scripts/down" 2>/dev/null
else
  echo "$out" | tail -n1
  echo "$out" | grep -q "needs tc's netem qdisc, which this machine lacks" && [ -z "$(leftovers)" ] &&
    ok "--latency-us without netem: refused clearly, nothing left" || fail "--latency-us: '$out', left '$(leftovers)'"
fi
out=$("$scripts/up" 2 --rate banana 2>&1)
[ $? -ne 0 ] && [ -z "$(leftovers)" ] &&
  [ "$(echo "$out" | tail -n1)" = "up: error: rate 'banana': give Gbit/s as a number (10, 0.1) or a tc rate such as 100mbit" ] &&
  ok "a bad --rate is refused before anything is made, naming the value" || fail "bad rate: '$out'"
finish
