#!/usr/bin/env bash
# The cluster scripts on the fixture's 2 hosts: names resolve and every host reaches every other
# one; mpirun through the rsh agent runs one process per host, each with its own host name;
# `shape` enforces a rate (a timed 12 MB transfer at 100 Mbit/s) and `shape off` lifts it;
# `link HOST down` cuts a host off and `link HOST up` reconnects it; rerunning `up` with another
# N adds and removes hosts. Usage: check_scripts.sh REPO
set -u
repo=$1
source "$repo/tests/cluster/common.sh"
use_cluster
scripts=$repo/scripts/cluster
transfer=$repo/tests/cluster/transfer.py
IFS=, read -r h1 h2 <<<"$STRATA_CLUSTER_HOSTS"
a1=$(getent hosts "$h1" | awk '{print $1}')
a2=$(getent hosts "$h2" | awk '{print $1}')
[ -n "$a1" ] && [ -n "$a2" ] && ok "$h1 and $h2 resolve to $a1 and $a2" || fail "host names do not resolve"

probe() {  # probe FROM TO_ADDR -> reachable | unreachable
  ip netns exec "$1" /usr/bin/python3 "$transfer" probe "$2" 5299
}
[ "$(probe "$h1" "$a2")" = reachable ] && [ "$(probe "$h2" "$a1")" = reachable ] &&
  [ "$(probe "$h1" "$STRATA_CLUSTER_SUBNET.1")" = reachable ] &&
  ok "the hosts reach each other and the bridge" || fail "hosts do not reach each other"

names=$(timeout 60 "$scripts/nsrsh" "$h1" hostname 2>&1)
[ "$names" = "$h1" ] && ok "the rsh agent runs on $h1 with its own host name" || fail "nsrsh: '$names'"
names=$(timeout 60 "${cluster_mpirun[@]}" -np 2 hostname 2>&1 | sort | paste -sd' ')
[ "$names" = "$h1 $h2" ] && ok "mpirun -np 2 runs one process on each host: $names" ||
  fail "mpirun hostname printed '$names'"

# timed TO_HOST TO_ADDR FROM_HOST BYTES -> "bytes seconds" measured by the receiver
timed() {
  local out=$tmp/serve.out
  ip netns exec "$1" /usr/bin/python3 "$transfer" serve "$2" 5201 >"$out" &
  local server=$!
  ip netns exec "$3" /usr/bin/python3 "$transfer" send "$2" 5201 "$4"
  wait "$server"
  cat "$out"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; "$scripts/shape" off >/dev/null 2>&1; "$scripts/link" "$h2" up >/dev/null 2>&1' EXIT
bytes=$((12 * 1000 * 1000))
"$scripts/shape" 0.1 || fail "shape 0.1"
read -r got seconds <<<"$(timed "$h2" "$a2" "$h1" "$bytes")"
mbit=$(awk -v b="${got:-0}" -v s="${seconds:-0}" 'BEGIN { printf "%.1f", (s > 0 ? b * 8 / s / 1e6 : 0) }')
echo "100 Mbit/s link: $got bytes in $seconds s = $mbit Mbit/s of payload"
# TCP/IP headers take ~4% of 1500-byte frames; 70..102 allows for the burst and timer slack.
if [ "${got:-0}" = "$bytes" ] && awk -v m="$mbit" 'BEGIN { exit !(m >= 70 && m <= 102) }'; then
  ok "the shaped link carries $mbit Mbit/s (rate 100 Mbit/s)"
else
  fail "shaped link: $mbit Mbit/s, expected 70..102"
fi
"$scripts/shape" off || fail "shape off"
read -r got seconds <<<"$(timed "$h2" "$a2" "$h1" "$bytes")"
mbit=$(awk -v b="${got:-0}" -v s="${seconds:-0}" 'BEGIN { printf "%.1f", (s > 0 ? b * 8 / s / 1e6 : 0) }')
echo "unshaped link: $got bytes in $seconds s = $mbit Mbit/s"
awk -v m="$mbit" 'BEGIN { exit !(m > 150) }' && ok "unshaped, the same transfer runs at $mbit Mbit/s" ||
  fail "unshaped link: $mbit Mbit/s"
[ -z "$(tc qdisc show dev "v${STRATA_CLUSTER_PREFIX}1" | grep tbf)" ] && ok "shape off removed the tbf" ||
  fail "a tbf is left after shape off"

"$scripts/link" "$h2" down
[ "$(probe "$h1" "$a2")" = unreachable ] && ok "link $h2 down: $h2 is unreachable" ||
  fail "link $h2 down: still reachable"
"$scripts/link" "$h2" up
wait_until 10 test "$(probe "$h1" "$a2")" = reachable && ok "link $h2 up: reachable again" ||
  fail "link $h2 up: still unreachable"

# Idempotent: up 3 adds a host, up 2 removes it again, leaving the fixture as it was.
before=$(ip netns list | awk '{print $1}' | grep -c "^${STRATA_CLUSTER_PREFIX}[0-9]")
"$repo/scripts/cluster/up" 3 >/dev/null && [ "$(getent hosts "${STRATA_CLUSTER_PREFIX}3" | awk '{print $1}')" != "" ] &&
  ok "up 3 on a running 2-host cluster adds ${STRATA_CLUSTER_PREFIX}3" || fail "up 3"
"$repo/scripts/cluster/up" 2 >/dev/null
after=$(ip netns list | awk '{print $1}' | grep -c "^${STRATA_CLUSTER_PREFIX}[0-9]")
[ "$before" = 2 ] && [ "$after" = 2 ] && ! getent hosts "${STRATA_CLUSTER_PREFIX}3" >/dev/null &&
  ! ip link show "v${STRATA_CLUSTER_PREFIX}3" >/dev/null 2>&1 &&
  ok "up 2 again removes it (namespaces $before -> 3 -> $after)" || fail "up 2 after up 3: $after namespaces"
[ "$(probe "$h1" "$a2")" = reachable ] && ok "the hosts still reach each other" || fail "unreachable after up 2"
finish
